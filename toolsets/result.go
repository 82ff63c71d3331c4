package toolsets

// Result is a structured tool result with separate surfaces for the model,
// the application, the user interface and debugging. Return a Result (or
// *Result) from a tool when a plain value is not enough; a plain value v is
// treated as Result{Content: v}.
//
// Only ModelContent, or Content when ModelContent is nil, reaches the model.
// Metadata is public return metadata. AppValue and UserContent are for
// application and UI code; PrivateMetadata is kept in the recorded evidence
// for debugging. None of those three is ever shown to the model.
type Result struct {
	Content         any
	Metadata        map[string]any
	AppValue        any
	ModelContent    any
	UserContent     any
	PrivateMetadata map[string]any
}
