package events_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/weft-run/weft/events"
)

// benchMessages is a model request's message list of about 2 KB, as a
// short conversation with one tool call records it.
func benchMessages() json.RawMessage {
	var b strings.Builder
	b.WriteString(`[{"role":"system","content":"You are a careful assistant. Answer briefly and cite the tools you used."}`)
	for i := range 6 {
		fmt.Fprintf(&b, `,{"role":"user","content":"Question %d: what is the status of the production deployment of release v1.4.%d, and did the smoke tests pass?"}`, i, i)
		fmt.Fprintf(&b, `,{"role":"assistant","tool_calls":[{"id":"call_%d","name":"deploy_status","arguments":{"environment":"production","release":"v1.4.%d"}}]}`, i, i)
	}
	b.WriteString(`]`)
	return json.RawMessage(b.String())
}

// BenchmarkNewDataHot encodes and seals the data of the events a model
// call and a tool call record: a model request (~2 KB of messages, three
// tools), a model response with usage, and a tool return.
func BenchmarkNewDataHot(b *testing.B) {
	for _, tc := range []struct {
		name string
		typ  events.Type
		data any
	}{
		{"model.request", events.TypeModelRequest, events.ModelRequest{Model: "gpt-5-mini", Messages: benchMessages(),
			Tools: []string{"deploy_status", "search_docs", "open_ticket"}}},
		{"model.response", events.TypeModelResponse, events.ModelResponse{Model: "gpt-5-mini",
			Message:      json.RawMessage(`{"role":"assistant","content":"Release v1.4.5 is live in production; the smoke tests passed."}`),
			FinishReason: "stop", Usage: &events.Usage{Requests: 1, InputTokens: 812, OutputTokens: 64,
				Details: map[string]int64{"reasoning_tokens": 32, "cached_tokens": 512}}}},
		{"tool.returned", events.TypeToolReturned, events.ToolReturned{Tool: "deploy_status",
			Return: json.RawMessage(`{"environment":"production","release":"v1.4.5","status":"ok","smoke_tests":"passed"}`), Attempt: 1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := events.NewData(tc.typ, tc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
