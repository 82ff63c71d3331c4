// Package llm is weft's model port: what the runtime asks a model
// (Request), what it gets back (Response), the conversation in between
// (Message and its parts), and what it cost (Usage).
//
// A model is anything with a Request method (Model). Provider adapters
// (OpenAI-style, Anthropic-style) implement it in subpackages and may also
// implement the Streamer role; Stream gives every model a stream, falling
// back to a one-chunk stream. Two models live here for tests and scripted
// runs:
//
//   - Scripted answers from a list of responses (NewScripted with
//     ScriptText and ScriptToolCalls), or always with the same text
//     (AlwaysText), and records every request it received.
//   - Func lets a Go function decide each response.
//
// # Messages
//
// A Message has a Role and a list of Parts. The part set is sealed and each
// role carries its own kinds:
//
//	RoleSystem     Instructions
//	RoleUser       UserPrompt, ToolReturn, RetryPrompt
//	RoleAssistant  Text, ToolCall
//
// A ToolCall's ID pairs it with the ToolReturn (or RetryPrompt) that
// answers it. Arguments and tool-return content are kept as raw JSON: the
// package never reinterprets them. Messages are stored in events and session
// archives, so their JSON form is part of weft's durable format (see
// Message.MarshalJSON); decoding is strict and an unknown part kind is an
// *UnknownPartError.
//
// This package is a leaf: it knows nothing of toolsets, actors or the event
// log. The runtime converts its tools to ToolDefinition and its canonical
// tool returns to ToolReturn and RetryPrompt parts.
//
// # Errors
//
// A failed model request is a *ModelError naming the model and unwrapping
// to the cause: ErrNoResponses when a Scripted model's script is used up,
// ErrNilResponse, ErrNilRequest, or the context's error.
package llm
