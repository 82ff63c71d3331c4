package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/weft-run/weft/llm"
)

// canned is a transport that answers every request with one body, without
// a network: the benchmarks measure the adapter and the SDK (encoding the
// request, building it, decoding the answer), not a socket.
type canned struct {
	contentType string
	body        []byte
}

func (c canned) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {c.contentType}},
		Body:    io.NopCloser(bytes.NewReader(c.body)),
		Request: req,
	}, nil
}

func cannedModel(b *testing.B, contentType string, body []byte) *Model {
	b.Helper()
	m, err := New("claude-sonnet-4-5", WithAPIKey(testKey), WithBaseURL("http://anthropic.invalid"),
		WithHTTPClient(&http.Client{Transport: canned{contentType, body}}))
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// benchConversation is a 20-message conversation with 10 tools: a prompt,
// then nine steps of an assistant turn with text and two parallel tool
// calls answered by a user message with their returns, then a last prompt.
func benchConversation() *llm.Request {
	req := &llm.Request{Instructions: strings.Repeat("You are a careful support agent. ", 20)}
	req.Messages = append(req.Messages, llm.UserMessage("Ticket 4711: the deploy of release 2.3 fails on the EU cluster. Find out why and fix it."))
	for i := range 9 {
		a, b := fmt.Sprintf("toolu_%02da", i), fmt.Sprintf("toolu_%02db", i)
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
				llm.Text{Text: "Looking at the logs and the release notes of step " + fmt.Sprint(i) + "."},
				llm.ToolCall{ID: a, Name: fmt.Sprintf("tool_%d", i), Arguments: json.RawMessage(`{"ticket_id":"4711","cluster":"eu-1","limit":50}`)},
				llm.ToolCall{ID: b, Name: fmt.Sprintf("tool_%d", i+1), Arguments: json.RawMessage(`{"release":"2.3","include_history":true}`)},
			}},
			llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
				llm.ToolReturn{CallID: a, Name: fmt.Sprintf("tool_%d", i), Content: json.RawMessage(`{"lines":["` + strings.Repeat("2026-12-01T12:00:00Z deploy step ok; ", 10) + `"],"truncated":false}`)},
				llm.ToolReturn{CallID: b, Name: fmt.Sprintf("tool_%d", i+1), Content: llm.TextContent(strings.Repeat("Release 2.3 changes the EU ingress. ", 8))},
			}},
		)
	}
	req.Messages = append(req.Messages, llm.UserMessage("Summarise what you found."))
	for i := range 10 {
		req.Tools = append(req.Tools, llm.ToolDefinition{
			Name:        fmt.Sprintf("tool_%d", i),
			Description: "Looks up a part of the ticket's context: logs, releases, deploys or metrics.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"ticket_id":{"type":"string","minLength":1,"maxLength":8},"cluster":{"type":"string","enum":["eu-1","us-1","ap-1"]},"limit":{"type":"integer","minimum":1,"maximum":500},"include_history":{"type":"boolean"}},"required":["ticket_id"]}`),
			Strict:      i%2 == 0,
		})
	}
	return req
}

// BenchmarkRequest: encode a 20-message conversation with 10 tools
// (half of them strict), send it through the SDK to a canned transport,
// and decode a message with text and two tool calls.
func BenchmarkRequest(b *testing.B) {
	req := benchConversation()
	if n := len(req.Messages); n != 20 {
		b.Fatalf("conversation of %d messages, want 20", n)
	}
	m := cannedModel(b, "application/json", readTestdata(b, "response_tool_use.json"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Request(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStream2000: a streamed answer of 2,000 chunks (1,000 text
// deltas, then a tool call in 1,000 input_json_delta pieces), decoded and
// accumulated into deltas and the final response.
func BenchmarkStream2000(b *testing.B) {
	m := cannedModel(b, "text/event-stream", stream2000())
	req := &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}}
	b.ReportAllocs()
	for b.Loop() {
		chunks := 0
		for ev, err := range m.Stream(b.Context(), req) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Response == nil {
				chunks++
			}
		}
		if chunks != 2001 { // 2,000 deltas and the tool call's first fragment
			b.Fatalf("%d chunks, want 2001", chunks)
		}
	}
}

func stream2000() []byte {
	var s bytes.Buffer
	ev := func(typ, data string) { fmt.Fprintf(&s, "event: %s\ndata: %s\n\n", typ, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2000,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for range 1000 {
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word "}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}`)
	ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"text\": \""}}`)
	for range 998 {
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"abc "}}`)
	}
	ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"}"}}`)
	ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":2000}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return s.Bytes()
}
