package openai_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/openai"
)

// inMemory answers every request with body, without a socket: what a
// benchmark on it measures is the adapter's and the SDK's own work
// (encoding the request, which it reads whole, and decoding the answer).
type inMemory struct {
	contentType string
	body        []byte
}

func (t inMemory) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {t.contentType}},
		Body:    io.NopCloser(bytes.NewReader(t.body)),
		Request: r,
	}, nil
}

func benchModel(b *testing.B, contentType string, body []byte) *openai.Model {
	m, err := openai.New("gpt-4.1-mini", openai.WithBaseURL("http://bench.invalid/v1"),
		openai.WithHTTPClient(&http.Client{Transport: inMemory{contentType, body}}))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

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
// answer with two tool calls.
func BenchmarkRequest(b *testing.B) {
	answer, err := os.ReadFile("testdata/chat_tools.response.json")
	if err != nil {
		b.Fatal(err)
	}
	m := benchModel(b, "application/json", answer)
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
// Response.
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
	m := benchModel(b, "text/event-stream", []byte(sse.String()))
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
