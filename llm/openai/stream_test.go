package openai_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
)

func TestChatStream(t *testing.T) {
	s := newServer(t, replay(t, "chat_stream_tools.sse"))
	m := newModel(t, s)
	var events []llm.StreamEvent
	for ev, err := range m.Stream(t.Context(), conversation()) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	want := []llm.StreamEvent{
		{TextDelta: "Checking"},
		{TextDelta: " both."},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "call_A", Name: "lookup"}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 1, ID: "call_B", Name: "weather"}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ArgumentsDelta: `{"ticket_`}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 1, ArgumentsDelta: `{"city":`}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 0, ArgumentsDelta: `id":"T-9","include_history":null}`}}},
		{ToolCalls: []llm.ToolCallDelta{{Index: 1, ArgumentsDelta: `"Rome"}`}}},
		{Response: &llm.Response{
			Text: "Checking both.", Model: "openai-compatible:gpt-4.1-mini", FinishReason: llm.FinishToolCalls,
			ToolCalls: []llm.ToolCall{
				{ID: "call_A", Name: "lookup", Arguments: []byte(`{"ticket_id":"T-9"}`)},
				{ID: "call_B", Name: "weather", Arguments: []byte(`{"city":"Rome"}`)},
			},
			Usage: llm.Usage{InputTokens: 2048, OutputTokens: 51, CacheReadTokens: 1536, Requests: 1},
		}},
	}
	if d := cmp.Diff(want, events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	reqs := s.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	golden(t, "chat_conversation_stream.request.json", reqs[0].Body)
}

// cutAfter streams the first n events of a testdata file, then drops the
// connection without ending the chunked body.
func cutAfter(t *testing.T, file string, n int) http.HandlerFunc {
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	events := strings.SplitAfter(string(data), "\n\n")
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, e := range events[:n] {
			_, _ = w.Write([]byte(e))
		}
		w.(http.Flusher).Flush()
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_ = buf.Flush()
		_ = conn.Close()
	}
}

func status(code int, header map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

const (
	rateLimited = `{"error":{"message":"Rate limit reached for gpt-4.1-mini in organization org-x on tokens per min (TPM): Limit 200000, Used 199000, Requested 3000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`
	overloaded  = `{"error":{"message":"The engine is currently overloaded, please try again later.","type":"server_error","param":null,"code":null}}`
)

func TestChatStreamFailures(t *testing.T) {
	tests := []struct {
		name       string
		handler    func(t *testing.T) http.HandlerFunc
		wantDeltas int // events before the error
		want       llm.ModelError
		is         error
	}{
		{name: "error mid-stream", handler: func(t *testing.T) http.HandlerFunc { return replay(t, "chat_stream_error.sse") }, wantDeltas: 1,
			want: llm.ModelError{Type: "server_error", Retryable: true}},
		{name: "malformed chunk", handler: func(t *testing.T) http.HandlerFunc { return replay(t, "chat_stream_malformed.sse") }, wantDeltas: 1,
			want: llm.ModelError{}, is: errMalformed},
		{name: "connection cut mid-stream", handler: func(t *testing.T) http.HandlerFunc { return cutAfter(t, "chat_stream_tools.sse", 6) }, wantDeltas: 5,
			want: llm.ModelError{Retryable: true}},
		{name: "clean end before finishing", handler: func(t *testing.T) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hal\"}}]}\n\ndata: [DONE]\n\n"))
			}
		}, wantDeltas: 1, want: llm.ModelError{Retryable: true}},
		{name: "429 with Retry-After", handler: func(t *testing.T) http.HandlerFunc {
			return status(429, map[string]string{"Retry-After": "7"}, rateLimited)
		}, want: llm.ModelError{StatusCode: 429, Type: "tokens", Code: "rate_limit_exceeded", Retryable: true, RetryAfter: 7e9}},
		{name: "503", handler: func(t *testing.T) http.HandlerFunc { return status(503, nil, overloaded) },
			want: llm.ModelError{StatusCode: 503, Type: "server_error", Retryable: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.handler(t))
			m := newModel(t, s)
			deltas := 0
			var gotErr error
			for ev, err := range m.Stream(t.Context(), conversation()) {
				if err != nil {
					gotErr = err
					continue
				}
				if ev.Response != nil {
					t.Fatalf("a final response after a failure: %+v", ev.Response)
				}
				if gotErr != nil {
					t.Fatal("an event after the error")
				}
				deltas++
			}
			if deltas != tt.wantDeltas {
				t.Errorf("%d deltas before the error, want %d", deltas, tt.wantDeltas)
			}
			me := modelError(t, gotErr)
			got := llm.ModelError{StatusCode: me.StatusCode, Type: me.Type, Code: me.Code, Retryable: me.Retryable, RetryAfter: me.RetryAfter}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("error %v (-want +got):\n%s", gotErr, d)
			}
			if me.Provider != "openai-compatible" || me.Model != "gpt-4.1-mini" {
				t.Errorf("provider, model = %q, %q", me.Provider, me.Model)
			}
			if tt.is != nil && !errors.Is(gotErr, tt.is) {
				t.Errorf("error %v does not match %v", gotErr, tt.is)
			}
			if _, err := llm.Collect(m.Stream(t.Context(), conversation())); err == nil {
				t.Error("Collect of the failing stream succeeded")
			}
		})
	}
}

func modelError(t *testing.T, err error) *llm.ModelError {
	t.Helper()
	me, ok := errors.AsType[*llm.ModelError](err)
	if !ok {
		t.Fatalf("error %T %v is not a *llm.ModelError", err, err)
	}
	return me
}

// An endless stream: the consumer that stops iterating (or whose context
// ends) releases the connection, and the server sees its request end.
func TestChatStreamStops(t *testing.T) {
	for _, how := range []string{"break", "cancel"} {
		t.Run(how, func(t *testing.T) {
			gone := make(chan struct{})
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				defer close(gone)
				w.Header().Set("Content-Type", "text/event-stream")
				bw := bufio.NewWriter(w)
				for r.Context().Err() == nil {
					_, _ = bw.WriteString("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"la \"}}]}\n\n")
					_ = bw.Flush()
					w.(http.Flusher).Flush()
				}
			})
			m := newModel(t, s)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			n := 0
			var last error
			for _, err := range m.Stream(ctx, conversation()) {
				n++
				last = err
				if how == "break" && n == 3 {
					break
				}
				if how == "cancel" && n == 3 {
					cancel()
				}
				if err != nil {
					break
				}
				if n > 10000 {
					t.Fatal("the stream did not stop")
				}
			}
			select {
			case <-gone:
			case <-t.Context().Done():
				t.Fatal("the server never saw the request end")
			}
			if how == "cancel" {
				me := modelError(t, last)
				if !errors.Is(last, context.Canceled) || me.Retryable {
					t.Errorf("error after cancel = %v (retryable %v), want context.Canceled, not retryable", last, me.Retryable)
				}
			}
		})
	}
}

// A server that answers a streamed request with one JSON answer still
// gives a stream: one event with everything, and the Response.
func TestChatStreamWholeAnswer(t *testing.T) {
	s := newServer(t, replay(t, "chat_tools.response.json"))
	m := newModel(t, s)
	var events []llm.StreamEvent
	for ev, err := range m.Stream(t.Context(), conversation()) {
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	if len(events) != 1 || events[0].Response == nil || len(events[0].ToolCalls) != 2 || events[0].ToolCalls[1].ID != "call_2" {
		t.Fatalf("events = %+v", events)
	}
	if got := string(events[0].Response.ToolCalls[0].Arguments); got != `{"ticket_id":"T-2"}` {
		t.Errorf("arguments = %s", got)
	}
}
