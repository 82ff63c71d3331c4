package llm

import (
	"encoding/json"
	"testing"
)

// benchRequest is the second request of the seeds' "add" run: a prompt,
// the tool call, its return, and one tool definition.
func benchRequest() *Request {
	return &Request{
		Instructions: "You add numbers.",
		Messages: []Message{
			UserMessage("Add two numbers"),
			{Role: RoleAssistant, Parts: []Part{ToolCall{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)}}},
			{Role: RoleUser, Parts: []Part{ToolReturn{CallID: "call_add", Name: "add", Content: json.RawMessage(`{"total":5}`)}}},
		},
		Tools: []ToolDefinition{{Name: "add", Description: "Add two numbers.", Parameters: json.RawMessage(`{"type":"object","properties":{"left":{"type":"integer"},"right":{"type":"integer"}},"required":["left","right"]}`)}},
	}
}

// BenchmarkScriptedRequest measures one answer of a scripted model, the
// recording of the request included: the model's share of a runtime
// benchmark that uses it.
func BenchmarkScriptedRequest(b *testing.B) {
	req := benchRequest()
	m := AlwaysText("done")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Request(b.Context(), req); err != nil {
			b.Fatal(err)
		}
		if len(m.requests) > 1024 { // keep the record from growing without bound
			m.requests = m.requests[:0]
		}
	}
}

func BenchmarkMessageJSON(b *testing.B) {
	msg := Message{Role: RoleAssistant, Parts: []Part{
		Text{Text: "Adding."},
		ToolCall{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)},
	}}
	data, err := json.Marshal(msg)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m Message
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
