package openai_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weft-run/weft/llm"
)

// benchRequest is a 20-message conversation with 10 tools.
func benchRequest() *llm.Request {
	req := &llm.Request{Instructions: "You are a support agent. Be brief and use the tools."}
	for i := range 10 {
		req.Tools = append(req.Tools, llm.ToolDefinition{
			Name: fmt.Sprintf("tool_%d", i), Description: "Looks something up.", Strict: i%2 == 0,
			Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"limit":{"type":"integer"},"filter":{"type":"object","properties":{"tag":{"type":"string"}}}},"required":["id"]}`),
		})
	}
	for i := range 5 {
		req.Messages = append(req.Messages,
			llm.UserMessage(fmt.Sprintf("Question %d: what is the state of ticket T-%d and its owner?", i, i)),
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.Text{Text: "Let me check."},
				llm.ToolCall{ID: fmt.Sprintf("c%da", i), Name: "tool_0", Arguments: json.RawMessage(`{"id":"T-1","limit":3}`)},
				llm.ToolCall{ID: fmt.Sprintf("c%db", i), Name: "tool_1", Arguments: json.RawMessage(`{"id":"T-2"}`)},
			}},
			llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
				llm.ToolReturn{CallID: fmt.Sprintf("c%da", i), Name: "tool_0", Content: json.RawMessage(`{"state":"open","owner":"ana","updated":"2026-11-30"}`)},
				llm.ToolReturn{CallID: fmt.Sprintf("c%db", i), Name: "tool_1", Content: llm.TextContent("closed by bob")},
			}},
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text{Text: "T-1 is open (ana); T-2 was closed by bob."}}},
		)
	}
	return req
}

// BenchmarkRequest measures the adapter's own work per request: encoding a
// 20-message conversation with 10 tools (half strict) and decoding an
// answer with two tool calls, over a loopback server that answers at once.
func BenchmarkRequest(b *testing.B) {
	s := newServer(b, replay(b, "chat_tools.response.json"))
	m := newModel(b, s)
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Request(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStream2000 measures decoding a 2,000-chunk stream (text deltas
// then two tool calls' argument deltas) into events and the final
// Response, over a loopback server replaying it from memory.
func BenchmarkStream2000(b *testing.B) {
	var sse strings.Builder
	chunk := func(delta string) {
		fmt.Fprintf(&sse, "data: {\"id\":\"chatcmpl-B\",\"object\":\"chat.completion.chunk\",\"created\":1764590000,\"model\":\"gpt-4.1-mini\",\"choices\":[{\"index\":0,\"delta\":%s,\"logprobs\":null,\"finish_reason\":null}]}\n\n", delta)
	}
	for range 1500 {
		chunk(`{"content":"word "}`)
	}
	chunk(`{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"tool_0","arguments":""}}]}`)
	chunk(`{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"tool_1","arguments":""}}]}`)
	for i := range 496 {
		chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":"ab"}}]}`, i%2))
	}
	fmt.Fprintf(&sse, "data: {\"id\":\"chatcmpl-B\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n")
	fmt.Fprintf(&sse, "data: {\"id\":\"chatcmpl-B\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2000,\"total_tokens\":2010}}\n\n")
	sse.WriteString("data: [DONE]\n\n")
	body := []byte(sse.String())
	s := newServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	})
	m := newModel(b, s)
	req := &llm.Request{Messages: []llm.Message{llm.UserMessage("go")}}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev, err := range m.Stream(b.Context(), req) {
			if err != nil {
				b.Fatal(err)
			}
			n++
			if ev.Response != nil && len(ev.Response.ToolCalls) != 2 {
				b.Fatal("wrong response")
			}
		}
		if n != 1999 {
			b.Fatalf("%d events", n)
		}
	}
}
