package resilient_test

import (
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// got is what a consumer saw of a stream: its deltas, the final answer's
// text, model and attempts, and the error.
type got struct {
	Deltas   []string
	Final    string
	Model    string
	Attempts int
	Err      string
}

func consume(seq func(func(llm.StreamEvent, error) bool), stopAfter int) got {
	var g got
	n := 0
	for ev, err := range seq {
		if err != nil {
			g.Err = err.Error()
			continue
		}
		if ev.TextDelta != "" {
			g.Deltas = append(g.Deltas, ev.TextDelta)
		}
		if ev.Response != nil {
			g.Final, g.Model, g.Attempts = ev.Response.Text, ev.Response.Model, ev.Response.Attempts
		}
		if n++; n == stopAfter {
			break
		}
	}
	return g
}

// A stream is retried only when it failed before yielding an event; once
// the consumer saw one, the error is passed on and nothing is retried.
func TestRetryStream(t *testing.T) {
	e503 := statusErr(503, true, 0)
	tests := []struct {
		name      string
		steps     []step
		stopAfter int // the consumer stops after this many events; 0: never
		want      got
		wantCalls int
	}{
		{name: "failed before yielding, twice",
			steps:     []step{fail(e503), fail(connErr()), {deltas: []string{"a", "b"}}},
			want:      got{Deltas: []string{"a", "b"}, Final: "ab", Model: "fake:m", Attempts: 3},
			wantCalls: 3},
		{name: "failed after yielding",
			steps:     []step{{deltas: []string{"a"}, err: e503}, ok("never")},
			want:      got{Deltas: []string{"a"}, Err: e503.Error()},
			wantCalls: 1},
		{name: "not retryable",
			steps:     []step{fail(statusErr(400, false, 0)), ok("never")},
			want:      got{Err: statusErr(400, false, 0).Error()},
			wantCalls: 1},
		{name: "the consumer stops",
			steps:     []step{fail(e503), {deltas: []string{"a", "b", "c"}}},
			stopAfter: 2,
			want:      got{Deltas: []string{"a", "b"}},
			wantCalls: 2},
		{name: "ended without an answer after yielding",
			steps:     []step{{deltas: []string{"a"}, noFinal: true}, ok("never")},
			want:      got{Deltas: []string{"a"}, Err: `model "fake:m": llm: stream ended without a final response`},
			wantCalls: 1},
		{name: "ended without an answer or an event",
			steps:     []step{{noFinal: true}, ok("never")},
			want:      got{Err: `model "fake:m": llm: stream ended without a final response`},
			wantCalls: 1},
		{name: "budget exhausted",
			steps:     []step{fail(e503)},
			want:      got{Err: `model "fake:m": status 503: gave up after 4 attempts: service unavailable`},
			wantCalls: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := streamingFake{newFake("fake:m", tt.steps...)}
				s, isStreamer := resilient.Retry(m).(llm.Streamer)
				if !isStreamer {
					t.Fatal("Retry is not a Streamer")
				}
				g := consume(s.Stream(t.Context(), request("hi")), tt.stopAfter)
				if d := cmp.Diff(tt.want, g); d != "" {
					t.Errorf("stream (-want +got):\n%s", d)
				}
				if m.Calls() != tt.wantCalls {
					t.Errorf("calls = %d, want %d", m.Calls(), tt.wantCalls)
				}
			})
		})
	}
}

// A model that does not stream is streamed as one chunk, and retried.
func TestRetryStreamsAModelThatDoesNotStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newFake("fake:m", fail(statusErr(429, true, 0)), ok("done"))
		resp, err := llm.Collect(llm.Stream(t.Context(), resilient.Retry(m), request("hi")))
		if err != nil || resp.Text != "done" || resp.Attempts != 2 {
			t.Errorf("Collect = %+v, %v; want done after 2 attempts", resp, err)
		}
	})
}
