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
//
// Failed marks the result as a failure the tool reports with a payload
// worth showing (a compiler's output, a partial listing, a remote error
// body). Its return keeps every surface, and is an [KindExecution] return
// (success false, is_error true): the tool failed, and the model and the
// evidence say so. Unlike an error, a failed result is the tool's final
// answer: the registry never retries it. Return an error instead when a
// retry might succeed.
type Result struct {
	Content         any
	Metadata        map[string]any
	AppValue        any
	ModelContent    any
	UserContent     any
	PrivateMetadata map[string]any
	Failed          bool
	// ErrorHandlers names the error handlers this result registers, of
	// those the tool declared (WithErrorHandler); nil registers them all,
	// an empty list none. See MetaErrorHandlers.
	ErrorHandlers []string
}
