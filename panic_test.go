package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
)

// panickyName is a model whose ModelName panics while armed: the session
// actor asks it for the name it records in model.request, so the panic
// happens inside the actor's message handling (every time: a restarted
// actor that carried the run on would panic again).
type panickyName struct {
	*llm.Scripted
	armed atomic.Bool
}

func (m *panickyName) ModelName() string {
	if m.armed.Load() {
		panic("model name lookup: nil config")
	}
	return "test:panicky"
}

// TestRunFailsOnSessionPanic: a panic inside the session actor's handling
// of a run fails the run through the normal path: Run returns promptly
// with a *RunError of kind "panic" naming the panic's value, the log ends
// the run with run.failed, and the session runs its next run.
func TestRunFailsOnSessionPanic(t *testing.T) {
	rt := newRuntime(t)
	model := &panickyName{Scripted: llm.NewScripted(llm.ScriptText("second"))}
	sess := newAgent(t, rt, weft.AgentConfig{Model: model}).NewSession()
	model.armed.Store(true)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	res, err := sess.Run(ctx, "first")
	var re *weft.RunError
	if !errors.As(err, &re) || re.Kind != "panic" || !strings.Contains(re.Message, "model name lookup: nil config") {
		t.Fatalf("Run = %+v, %v; want a RunError of kind panic naming the panic", res, err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run returned only when its context ended")
	}
	evs := streamEvents(t, rt, sess.ID())
	last := evs[len(evs)-1]
	if last.Type != events.TypeRunFailed || last.RunID != re.RunID {
		t.Fatalf("log ends %v; want run.failed of run %s", types(evs), re.RunID)
	}
	var d events.RunFailed
	if err := json.Unmarshal(last.Data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Error.Kind != "panic" || !strings.Contains(d.Error.Message, "model name lookup: nil config") || strings.Contains(d.Error.Message, "goroutine") {
		t.Errorf("run.failed error %+v; want kind panic, the panic's value, no stack", d.Error)
	}

	model.armed.Store(false)
	res, err = sess.Run(ctx, "again")
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "second" {
		t.Fatalf("second Run = %+v, %v; want completed", res, err)
	}
}

// TestRunFailsOnTaskPanic: a panic in user code the session runs outside
// its actor, on the goroutine that calls the model (the model itself, an
// output validator), fails the run with kind panic as well, instead of
// crashing the process; the session's next run completes.
func TestRunFailsOnTaskPanic(t *testing.T) {
	tests := []struct {
		name      string
		model     llm.Model
		validator weft.OutputValidator
	}{
		{name: "output validator", model: llm.NewScripted(llm.ScriptText("first"), llm.ScriptText("second")),
			validator: func(_ context.Context, out string) error {
				if out == "first" {
					panic("validator: index out of range")
				}
				return nil
			}},
		{name: "model", model: &panicsFirst{Scripted: llm.NewScripted(llm.ScriptText("second"))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t)
			cfg := weft.AgentConfig{Model: tc.model}
			if tc.validator != nil {
				cfg.OutputValidators = []weft.OutputValidator{tc.validator}
			}
			sess := newAgent(t, rt, cfg).NewSession()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			res, err := sess.Run(ctx, "first")
			var re *weft.RunError
			if !errors.As(err, &re) || re.Kind != "panic" || !strings.HasPrefix(re.Message, "panic: ") {
				t.Fatalf("Run = %+v, %v; want a RunError of kind panic", res, err)
			}
			if evs := streamEvents(t, rt, sess.ID()); evs[len(evs)-1].Type != events.TypeRunFailed {
				t.Fatalf("log ends %v; want run.failed", types(evs))
			}
			res, err = sess.Run(ctx, "again")
			if err != nil || res.Status != weft.StatusCompleted || res.Output != "second" {
				t.Fatalf("second Run = %+v, %v; want completed", res, err)
			}
		})
	}
}

// panicsFirst is a model whose first request panics.
type panicsFirst struct {
	*llm.Scripted
	done atomic.Bool
}

func (m *panicsFirst) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if m.done.CompareAndSwap(false, true) {
		panic("model client: nil transport")
	}
	return m.Scripted.Request(ctx, req)
}

// requestPanicsArmed is a model whose Request panics while armed.
type requestPanicsArmed struct {
	*llm.Scripted
	armed atomic.Bool
}

func (m *requestPanicsArmed) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if m.armed.Load() {
		panic("model client: nil transport")
	}
	return m.Scripted.Request(ctx, req)
}

// failureRefused is a store that refuses, while armed, every append that
// records a run's failure.
type failureRefused struct {
	events.Store
	armed atomic.Bool
}

func (s *failureRefused) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	if s.armed.Load() {
		for _, ev := range evs {
			if ev.Type == events.TypeRunFailed {
				return events.AppendResult{}, errors.New("test: append refused")
			}
		}
	}
	return s.Store.Append(ctx, stream, exp, evs...)
}

// TestRunUnavailableWhenPanicUnrecorded: when a panic of the run's model
// (long after the run's start was answered) cannot be recorded as the
// run's failure, the session's actor stops and Run returns promptly with
// ErrUnavailable rather than when its context ends; the log records
// nothing of it (the run is still running there), and the session's next
// command rebuilds the actor, which carries the run on to its end.
func TestRunUnavailableWhenPanicUnrecorded(t *testing.T) {
	store := &failureRefused{Store: memstore.New()}
	rt := startOn(t, store)
	model := &requestPanicsArmed{Scripted: llm.NewScripted(llm.ScriptText("done"))}
	sess := newAgent(t, rt, weft.AgentConfig{Model: model}).NewSession()
	model.armed.Store(true)
	store.armed.Store(true)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	res, err := sess.Run(ctx, "first")
	if !errors.Is(err, weft.ErrUnavailable) || res != nil {
		t.Fatalf("Run = %+v, %v; want ErrUnavailable", res, err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run returned only when its context ended")
	}
	evs := streamEvents(t, rt, sess.ID())
	if got := types(evs); got[0] != events.TypeRunStarted || got[len(got)-1] != events.TypeModelRequest {
		t.Fatalf("log %v; want the run started and its model request, nothing settling it", got)
	}
	runID := evs[0].RunID

	model.armed.Store(false)
	store.armed.Store(false)
	if _, err := sess.Run(ctx, "again"); !errors.Is(err, weft.ErrSessionBusy) {
		t.Fatalf("Run while the first run goes on: %v, want busy", err)
	}
	res, err = sess.Wait(ctx, runID)
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "done" {
		t.Fatalf("Wait = %+v, %v; want the first run completed by the session's next actor", res, err)
	}
}
