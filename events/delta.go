package events

// ModelDelta is live model output: what a streaming model wrote since the
// previous delta of the same step. The runtime publishes it on the
// session's delta subject (weft.delta.session.<id>) while the model
// writes; it is never recorded (TypeModelDelta is live only, and stores
// refuse to append it): the model.response event that ends the step holds
// the whole answer.
type ModelDelta struct {
	// Step is the model request's step in its run (1 for the first).
	Step int `json:"step"`
	// Seq numbers the step's deltas from 1. Deltas are best effort: a
	// publisher that falls behind drops them rather than slow the run, so
	// a gap in Seq means some were dropped (the response has everything).
	Seq int `json:"seq"`
	// Text is text added to the answer.
	Text string `json:"text,omitempty"`
	// ToolCalls are fragments of tool calls added to the answer.
	ToolCalls []ToolCallDelta `json:"tool_calls,omitempty"`
}

// ToolCallDelta is a fragment of a tool call being streamed: the
// fragments of one call share its Index; ID and Name come with its first
// fragment, and the Arguments of its fragments, concatenated, are its
// JSON arguments.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// LiveOnly reports whether t is published live and never recorded
// (TypeModelDelta): appending an event of such a type is refused.
func (t Type) LiveOnly() bool { return catalogue[t].liveOnly }
