package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Model is the port every model implements: a provider adapter, the
// Scripted test model, or a Func.
//
// Request sends req to the model and blocks until the whole response is
// there or ctx is done. Implementations must be safe for concurrent use,
// must not modify req, and must not keep it after returning. On failure
// they return a *ModelError that unwraps to the cause (a sentinel such as
// ErrNoResponses, or ctx.Err() when the context ended the request); a nil
// error comes with a non-nil *Response.
type Model interface {
	Request(ctx context.Context, req *Request) (*Response, error)
}

// Named is the optional role of a model that says how the event log names
// it: "provider:model-id", e.g. "openai:gpt-4.1-mini" or
// "anthropic:claude-sonnet-4-5", the same name its responses carry in
// Response.Model. The runtime records it in model.request.
type Named interface {
	ModelName() string
}

// NameOf returns m's ModelName when m is Named, and its Go type (e.g.
// "*mypkg.Model") otherwise.
func NameOf(m Model) string {
	if n, ok := m.(Named); ok {
		return n.ModelName()
	}
	return fmt.Sprintf("%T", m)
}

// Request is everything a model is asked with. It is JSON-encodable so that
// it can be recorded in the event log.
type Request struct {
	// Instructions is the system text for this request.
	Instructions string `json:"instructions,omitempty"`
	// Messages is the conversation so far, oldest first; the last message
	// is usually RoleUser (a prompt, tool returns or retry prompts).
	Messages []Message `json:"messages"`
	// Tools are the tools the model may call in this request.
	Tools []ToolDefinition `json:"tools,omitempty"`
	// Settings tune the generation.
	Settings Settings `json:"settings,omitzero"`
	// Run says which run and step the request belongs to; models may use
	// it for tracing or idempotency keys, never for the answer's content.
	Run RunInfo `json:"run,omitzero"`
}

// ToolDefinition describes a tool to the model. It is the llm package's own
// view of a tool: the runtime converts its tools to it.
type ToolDefinition struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments (an object schema).
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Strict asks the provider to hold the model to the schema exactly,
	// where the provider supports it.
	Strict bool `json:"strict,omitempty"`
	// Metadata is the tool's definition metadata (toolsets.Definition),
	// gate marks included (approval_required, deferred_call): for hosts
	// and adapters to show; an adapter sends it to a provider only where
	// the provider has a place for it. Read-only.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Settings are the generation settings of a request. A zero field means
// "the model's default". Provider holds settings this struct does not
// name, by key, as JSON; adapters pass on the keys they know and ignore the
// others.
type Settings struct {
	Temperature   *float64                   `json:"temperature,omitempty"`
	TopP          *float64                   `json:"top_p,omitempty"`
	MaxTokens     int                        `json:"max_tokens,omitempty"`
	StopSequences []string                   `json:"stop_sequences,omitempty"`
	Seed          *int64                     `json:"seed,omitempty"`
	Provider      map[string]json.RawMessage `json:"provider,omitempty"`
}

// RunInfo identifies the run a request belongs to.
type RunInfo struct {
	SessionID string            `json:"session_id,omitempty"`
	RunID     string            `json:"run_id,omitempty"`
	Step      int               `json:"step,omitempty"` // 1 for the run's first model request
	Metadata  map[string]string `json:"metadata,omitempty"`
}

// Clone returns a copy of r that shares no memory with it. A nil r gives nil.
func (r *Request) Clone() *Request {
	if r == nil {
		return nil
	}
	out := *r
	if r.Messages != nil {
		out.Messages = make([]Message, len(r.Messages))
		for i, m := range r.Messages {
			out.Messages[i] = m.Clone()
		}
	}
	if r.Tools != nil {
		out.Tools = make([]ToolDefinition, len(r.Tools))
		for i, t := range r.Tools {
			t.Parameters = slices.Clone(t.Parameters)
			out.Tools[i] = t
		}
	}
	out.Settings = r.Settings.clone()
	out.Run.Metadata = maps.Clone(r.Run.Metadata)
	return &out
}

func (s Settings) clone() Settings {
	s.Temperature = clonePtr(s.Temperature)
	s.TopP = clonePtr(s.TopP)
	s.Seed = clonePtr(s.Seed)
	s.StopSequences = slices.Clone(s.StopSequences)
	if s.Provider != nil {
		p := make(map[string]json.RawMessage, len(s.Provider))
		for k, v := range s.Provider {
			p[k] = slices.Clone(v)
		}
		s.Provider = p
	}
	return s
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// LastMessage returns the last message of the conversation, and false when
// there is none.
func (r *Request) LastMessage() (Message, bool) {
	if len(r.Messages) == 0 {
		return Message{}, false
	}
	return r.Messages[len(r.Messages)-1], true
}
