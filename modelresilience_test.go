package weft_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// namedFunc is an llm.Func that names itself, as provider adapters do.
type namedFunc struct {
	name string
	f    llm.Func
}

func (m namedFunc) ModelName() string { return m.name }

func (m namedFunc) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return m.f.Request(ctx, req)
}

// flaky fails its first failures requests with err, then answers text as
// name.
func flaky(name string, failures int32, err error, text string) namedFunc {
	var calls atomic.Int32
	return namedFunc{name: name, f: func(context.Context, *llm.Request) (*llm.Response, error) {
		if calls.Add(1) <= failures {
			return nil, err
		}
		return &llm.Response{Text: text, Model: name}, nil
	}}
}

// The resilience wrappers through the runtime: model.request names the
// model as the wrapper does, model.response records the model that
// answered and the attempts it took, and a run whose retries ran out
// fails saying so.
func TestModelResilienceIsRecorded(t *testing.T) {
	overloaded := &llm.ModelError{Provider: "fake", Model: "flaky", StatusCode: 529, Type: "overloaded_error", Retryable: true, Err: errors.New("overloaded")}
	refused := &llm.ModelError{Provider: "fake", Model: "primary", StatusCode: 401, Err: errors.New("invalid api key")}
	fast := []resilient.RetryOption{resilient.WithDelays(time.Millisecond, 5*time.Millisecond, 2)}
	tests := []struct {
		name        string
		model       llm.Model
		wantRequest events.ModelRequest  // its Model
		wantResp    events.ModelResponse // its Model and Attempts
		wantErr     string               // the run's error message, "" for completed
	}{
		{name: "retried twice, then answered",
			model:       resilient.Retry(flaky("fake:flaky", 2, overloaded, "done"), fast...),
			wantRequest: events.ModelRequest{Model: "fake:flaky"},
			wantResp:    events.ModelResponse{Model: "fake:flaky", Attempts: 3}},
		{name: "the fallback's second model answered",
			model: resilient.Fallback(resilient.Retry(flaky("fake:primary", 1000, refused, "never"), fast...),
				resilient.Retry(flaky("fake:secondary", 0, nil, "done"), fast...)),
			wantRequest: events.ModelRequest{Model: "fallback(fake:primary,fake:secondary)"},
			wantResp:    events.ModelResponse{Model: "fake:secondary"}},
		{name: "the retries ran out",
			model:       resilient.Retry(flaky("fake:flaky", 1000, overloaded, "never"), append(fast, resilient.WithMaxAttempts(2))...),
			wantRequest: events.ModelRequest{Model: "fake:flaky"},
			wantErr:     `model "fake:flaky": status 529 (overloaded_error): gave up after 2 attempts: overloaded`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			sess := newAgent(t, rt, weft.AgentConfig{Model: tt.model}).NewSession()
			res, err := sess.Run(t.Context(), "go")
			if tt.wantErr != "" {
				var re *weft.RunError
				if !errors.As(err, &re) || re.Kind != "model_error" || re.Message != tt.wantErr {
					t.Fatalf("Run = %+v, %v; want a model_error %q", res, err, tt.wantErr)
				}
			} else if err != nil || res.Status != weft.StatusCompleted || res.Output != "done" {
				t.Fatalf("Run = %+v, %v; want completed with done", res, err)
			}
			var reqs []events.ModelRequest
			var resps []events.ModelResponse
			for _, ev := range streamEvents(t, rt, sess.ID()) {
				data, err := events.Decode(ev)
				if err != nil {
					t.Fatalf("decode %s: %v", ev.Type, err)
				}
				switch d := data.(type) {
				case events.ModelRequest:
					reqs = append(reqs, events.ModelRequest{Model: d.Model})
				case events.ModelResponse:
					resps = append(resps, events.ModelResponse{Model: d.Model, Attempts: d.Attempts})
				}
			}
			if d := cmp.Diff([]events.ModelRequest{tt.wantRequest}, reqs); d != "" {
				t.Errorf("model.request (-want +got):\n%s", d)
			}
			var wantResps []events.ModelResponse
			if tt.wantErr == "" {
				wantResps = []events.ModelResponse{tt.wantResp}
			}
			if d := cmp.Diff(wantResps, resps); d != "" {
				t.Errorf("model.response (-want +got):\n%s", d)
			}
		})
	}
}
