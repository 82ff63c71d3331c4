package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
)

// events collects a whole stream: its events and the error, if any.
func events(t *testing.T, m *Model, req *llm.Request) ([]llm.StreamEvent, error) {
	t.Helper()
	var out []llm.StreamEvent
	for ev, err := range m.Stream(t.Context(), req) {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

func TestStreamTextAndTools(t *testing.T) {
	s := newServer(t, replySSE(t, "stream_tools.sse"))
	got, err := events(t, s.model(t), hi())
	if err != nil {
		t.Fatal(err)
	}
	final := &llm.Response{
		Text: "Checking both.", Model: "anthropic:claude-sonnet-4-5", FinishReason: llm.FinishToolCalls,
		ToolCalls: []llm.ToolCall{
			{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
			{ID: "toolu_01UZqoRsZ9QmQaKGXFy4U5zP", Name: "get_time", Arguments: json.RawMessage(`{"tz": "Europe/Paris"}`)},
		},
		Usage: llm.Usage{InputTokens: 472 + 1024 + 64, OutputTokens: 89, CacheReadTokens: 1024, CacheWriteTokens: 64, Requests: 1},
	}
	want := []llm.StreamEvent{
		{TextDelta: "Checking "},
		{TextDelta: "both."},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather"}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ArgumentsDelta: `{"city": "Pa`}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 1, ID: "toolu_01UZqoRsZ9QmQaKGXFy4U5zP", Name: "get_time"}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 1, ArgumentsDelta: `{"tz":`}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ArgumentsDelta: `ris"}`}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 1, ArgumentsDelta: ` "Europe/Paris"}`}}},
		{Response: final},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestStreamMatchesRequest: the same message, streamed or not, gives the
// same response.
func TestStreamMatchesRequest(t *testing.T) {
	s := newServer(t, replySSE(t, "stream_text.sse"))
	streamed, err := llm.Collect(s.model(t).Stream(t.Context(), hi()))
	if err != nil {
		t.Fatal(err)
	}
	want := &llm.Response{Text: "Hi.", Model: "anthropic:claude-sonnet-4-5", FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 10, OutputTokens: 3, Requests: 1}}
	if diff := cmp.Diff(want, streamed); diff != "" {
		t.Errorf("streamed response (-want +got):\n%s", diff)
	}
}

// TestStreamFailures: an error event, a malformed event, a connection cut
// mid-stream and a stream that ends before message_stop each give one
// *llm.ModelError, after the deltas that came before it, and no Response.
func TestStreamFailures(t *testing.T) {
	tools := readTestdata(t, "stream_tools.sse")
	half := tools[:len(tools)/2]
	cases := []struct {
		name      string
		reply     http.HandlerFunc
		typ       string
		retryable bool
		is        error
	}{
		{name: "error event", reply: replySSE(t, "stream_error.sse"), typ: "overloaded_error", retryable: true, is: ErrAPI},
		{name: "malformed event", reply: replySSE(t, "stream_malformed.sse"), retryable: true, is: ErrMalformedStream},
		{name: "connection cut", reply: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.Write(half)
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			conn.Close() // no end of the chunked body: the client reads an unexpected EOF
		}, retryable: true, is: io.ErrUnexpectedEOF},
		{name: "ended before message_stop", reply: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(half)
		}, retryable: true, is: llm.ErrIncompleteStream},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.reply)
			got, err := events(t, s.model(t), hi())
			me := asModelError(t, err)
			if me.Type != tc.typ || me.Retryable != tc.retryable || me.StatusCode != 0 {
				t.Errorf("type %q retryable %v status %d, want %q %v 0 (%v)", me.Type, me.Retryable, me.StatusCode, tc.typ, tc.retryable, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v, want it to match %v", err, tc.is)
			}
			if len(got) == 0 {
				t.Error("no deltas before the error")
			}
			for _, ev := range got {
				if ev.Response != nil {
					t.Errorf("a Response before the error: %+v", ev.Response)
				}
			}
		})
	}
}

// TestStreamStopsWhenConsumerStops: breaking out of the loop closes the
// connection; the server's handler sees its request end.
func TestStreamStopsWhenConsumerStops(t *testing.T) {
	done := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(firstEvents(t, "stream_tools.sse", 4))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // held open until the client goes away
	})
	n := 0
	for _, err := range s.model(t).Stream(t.Context(), hi()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 {
		t.Fatalf("got %d events, want 1", n)
	}
	select {
	case <-done:
	case <-t.Context().Done():
		t.Fatal("the server's request never ended")
	}
}

func TestStreamStopsWhenContextEnds(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(firstEvents(t, "stream_tools.sse", 4))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var deltas int
	var last error
	for ev, err := range s.model(t).Stream(ctx, hi()) {
		if err != nil {
			last = err
			break
		}
		deltas++
		if ev.Response != nil {
			t.Fatal("a Response from a cancelled stream")
		}
		cancel()
	}
	me := asModelError(t, last)
	if deltas == 0 || me.Retryable || !errors.Is(last, context.Canceled) {
		t.Errorf("after %d deltas: %v (retryable %v), want a non-retryable context.Canceled", deltas, last, me.Retryable)
	}
}

// TestStreamProtocol: events out of the protocol's order are a malformed
// stream.
func TestStreamProtocol(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`
	text0 := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	tool0 := `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}`
	cases := []struct {
		name   string
		events []string
		want   error
	}{
		{"delta before message_start", []string{text0}, ErrMalformedStream},
		{"two message_starts", []string{start, start}, ErrMalformedStream},
		{"delta of a block never started", []string{start, `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`}, ErrMalformedStream},
		{"block started twice", []string{start, text0, text0}, ErrMalformedStream},
		{"delta after the block stopped", []string{start, text0, `{"type":"content_block_stop","index":0}`, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`}, ErrMalformedStream},
		{"json delta in a text block", []string{start, text0, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`}, ErrMalformedStream},
		{"message_stop with a tool block open", []string{start, tool0, `{"type":"message_stop"}`}, ErrMalformedStream},
		{"tool_use without an id", []string{start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"","name":"f","input":{}}}`}, llm.ErrInvalidResponse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			for _, e := range tc.events {
				var typ struct{ Type string }
				json.Unmarshal([]byte(e), &typ)
				body = append(body, "event: "+typ.Type+"\ndata: "+e+"\n\n"...)
			}
			s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(body)
			})
			_, err := events(t, s.model(t), hi())
			me := asModelError(t, err)
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if wantRetry := tc.want == ErrMalformedStream; me.Retryable != wantRetry {
				t.Errorf("retryable %v, want %v", me.Retryable, wantRetry)
			}
		})
	}
}

// firstEvents returns the first n events of testdata file name.
func firstEvents(t *testing.T, name string, n int) []byte {
	t.Helper()
	evs := bytes.SplitAfter(readTestdata(t, name), []byte("\n\n"))
	return bytes.Join(evs[:n], nil)
}
