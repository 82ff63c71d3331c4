package actors

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/internal/logtest"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// namePanics is a model whose ModelName panics while armed: the session
// actor asks for it when it records model.request, in its own goroutine.
type namePanics struct {
	llm.Model
	armed atomic.Bool
}

func (m *namePanics) ModelName() string {
	if m.armed.Load() {
		panic("no model name")
	}
	return "test:name-panics"
}

// appendFails is a store that refuses, while armed, every append that
// records a run's failure.
type appendFails struct {
	events.Store
	armed atomic.Bool
}

var errAppendRefused = errors.New("test: append refused")

func (s *appendFails) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	if s.armed.Load() {
		for _, ev := range evs {
			if ev.Type == events.TypeRunFailed {
				return events.AppendResult{}, errAppendRefused
			}
		}
	}
	return s.Store.Append(ctx, stream, exp, evs...)
}

// panicHost is a host on store whose agent "a" answers "done" with a
// model whose name panics while armed.
func panicHost(t *testing.T, store events.Store) (*Host, *namePanics) {
	t.Helper()
	model := &namePanics{Model: llm.AlwaysText("done")}
	return modelHost(t, testNATS(t), store, model), model
}

// lastEvent is the last event of the session's stream, whose hash chain
// it checks.
func lastEvent(t *testing.T, store events.Store, session string) events.Event {
	t.Helper()
	evs := verifyStream(t, store, session)
	if len(evs) == 0 {
		t.Fatalf("the stream of %s has no events", session)
	}
	return evs[len(evs)-1]
}

// A panic in the actor's handling of a run (here the model's ModelName,
// asked for model.request) fails the run with kind panic through the
// normal path: run.failed is recorded, the watchers hear it, and the
// session's next run completes.
func TestSessionPanicFailsTheRun(t *testing.T) {
	store := memstore.New()
	h, model := panicHost(t, store)
	model.armed.Store(true)
	outcomes, stop := h.Watch("r1")
	defer stop()
	if _, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	o := waitOutcome(t, outcomes)
	if o.Status != StatusFailed || o.Error == nil || o.Error.Kind != FailPanic || o.Error.Message != "panic: no model name" {
		t.Fatalf("outcome %s %+v; want failed with kind panic", o.Status, o.Error)
	}
	if ev := lastEvent(t, store, "s1"); ev.Type != events.TypeRunFailed || ev.RunID != "r1" {
		t.Fatalf("log ends with %s of run %q; want run.failed of r1", ev.Type, ev.RunID)
	}
	model.armed.Store(false)
	outcomes2, stop2 := h.Watch("r2")
	defer stop2()
	if _, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r2", Agent: "a", Prompt: "again"}); err != nil {
		t.Fatal(err)
	}
	if o := waitOutcome(t, outcomes2); o.Status != StatusCompleted || o.Output != "done" {
		t.Fatalf("second run: %s %q (%v)", o.Status, o.Output, o.Error)
	}
}

// badJSON is a metadata value whose encoding panics.
type badJSON struct{}

func (badJSON) MarshalJSON() ([]byte, error) { panic("marshal badJSON") }

// A command whose handling panics before the actor answered it (run
// metadata whose encoding panics) is answered
// with ErrInternal at once, nothing is recorded, and the session takes
// the next command.
func TestSessionPanicAnswersTheCommand(t *testing.T) {
	store := memstore.New()
	h, _ := panicHost(t, store)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := h.Command(ctx, "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi", Metadata: map[string]any{"x": badJSON{}}})
	var ce *CommandError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInternal) || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "panic: marshal badJSON") {
		t.Fatalf("Command error %v; want an internal CommandError naming the panic", err)
	}
	if _, err := store.ReadStream(t.Context(), events.SessionStream("s1"), 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("stream after the refused command: %v, want not found", err)
	}
	outcomes, stop := h.Watch("r2")
	defer stop()
	if _, err := h.Command(ctx, "s1", VerbStart, StartCommand{RunID: "r2", Agent: "a", Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	if o := waitOutcome(t, outcomes); o.Status != StatusCompleted {
		t.Fatalf("next run: %s (%v)", o.Status, o.Error)
	}
}

// When the run cannot be failed after a panic (the append of run.failed
// fails), the actor stops and the host forgets it, and the run's watchers
// hear it was lost; the session's next command rebuilds its actor from
// the log, which carries the run on.
func TestSessionPanicUnrecordedStopsTheActor(t *testing.T) {
	store := &appendFails{Store: memstore.New()}
	h, model := panicHost(t, store)
	model.armed.Store(true)
	store.armed.Store(true)
	outcomes, stop := h.Watch("r1")
	defer stop()
	if _, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		_, live := h.sessions["s1"]
		h.mu.Unlock()
		if !live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the actor that could not record the failure did not stop")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ev := lastEvent(t, store, "s1"); ev.Type != events.TypeRunStarted {
		t.Fatalf("log ends with %s; want run.started (nothing else recorded)", ev.Type)
	}
	model.armed.Store(false)
	store.armed.Store(false)
	_, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r2", Agent: "a", Prompt: "hi"})
	if !errors.Is(err, ErrSessionBusy) {
		t.Fatalf("start while r1 runs: %v, want busy", err)
	}
	if o := waitOutcome(t, outcomes); !errors.Is(o.Lost, ErrUnavailable) {
		t.Fatalf("first outcome of r1: %s (lost %v); want lost as its actor stopped", o.Status, o.Lost)
	}
	if o := waitOutcome(t, outcomes); o.Status != StatusCompleted || o.Output != "done" {
		t.Fatalf("r1 carried on by the next actor: %s %q (%v)", o.Status, o.Output, o.Error)
	}
}

// readPanics is a store whose ReadStream panics while armed.
type readPanics struct {
	events.Store
	armed atomic.Bool
}

func (s *readPanics) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	if s.armed.Load() {
		panic("read stream")
	}
	return s.Store.ReadStream(ctx, stream, from)
}

// A panic that comes back in every actor of the session (its store's
// read panics) refuses the commands with unavailable, each at once: they
// are not handed from one actor to the next; once the store reads, the
// session runs.
func TestSessionPanicEveryTimeRefusesCommands(t *testing.T) {
	store := &readPanics{Store: memstore.New()}
	h, _ := panicHost(t, store)
	store.armed.Store(true)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for i := range 3 {
		_, err := h.Command(ctx, "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("command %d: %v, want unavailable", i+1, err)
		}
	}
	store.armed.Store(false)
	outcomes, stop := h.Watch("r1")
	defer stop()
	if _, err := h.Command(ctx, "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	if o := waitOutcome(t, outcomes); o.Status != StatusCompleted {
		t.Fatalf("run once the store reads: %s (%v)", o.Status, o.Error)
	}
}

// requestPanics is a model whose Request panics while armed: on the
// task's goroutine, outside the actor.
type requestPanics struct {
	llm.Model
	armed atomic.Bool
}

func (m *requestPanics) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if m.armed.Load() {
		panic("model request")
	}
	return m.Model.Request(ctx, req)
}

// A panic of a task (the model's Request) fails the run with kind panic
// as one of the actor's own does; the next run completes.
func TestSessionTaskPanicFailsTheRun(t *testing.T) {
	store := memstore.New()
	model := &requestPanics{Model: llm.AlwaysText("done")}
	h := newTestHost(t, HostConfig{Conn: testNATS(t)(), Store: store})
	if err := h.Register(&AgentSpec{Name: "a", Model: model}); err != nil {
		t.Fatal(err)
	}
	model.armed.Store(true)
	outcomes, stop := h.Watch("r1")
	defer stop()
	if _, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	if o := waitOutcome(t, outcomes); o.Status != StatusFailed || o.Error == nil || o.Error.Kind != FailPanic || o.Error.Message != "panic: model request" {
		t.Fatalf("outcome %s %+v; want failed with kind panic", o.Status, o.Error)
	}
	model.armed.Store(false)
	outcomes2, stop2 := h.Watch("r2")
	defer stop2()
	if _, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r2", Agent: "a", Prompt: "again"}); err != nil {
		t.Fatal(err)
	}
	if o := waitOutcome(t, outcomes2); o.Status != StatusCompleted {
		t.Fatalf("second run: %s (%v)", o.Status, o.Error)
	}
}

// armsOnReply is a model whose Request, once called, arms its ModelName
// panic: the next model.request the actor builds panics, in its handling
// of the report of the tool the reply asks for, long after the run's
// start command was answered.
type armsOnReply struct {
	*namePanics
}

func (m armsOnReply) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := m.namePanics.Request(ctx, req)
	m.armed.Store(true)
	return resp, err
}

// When a panic in the handling of a tool's report (no command waits for
// it: the run's start was answered long before) cannot be recorded, the
// run's watchers hear at once that its actor stopped without settling it
// (Outcome.Lost, matching ErrUnavailable, no status), rather than nothing;
// nothing is invented in the log, and the session's next command rebuilds
// the actor, which carries the run on.
func TestSessionPanicUnrecordedTellsTheWatchers(t *testing.T) {
	store := &appendFails{Store: memstore.New()}
	logs := &logtest.Buffer{}
	model := &namePanics{Model: llm.NewScripted(
		llm.ScriptToolCalls(llm.ToolCall{ID: "c1", Name: "echo", Arguments: json.RawMessage(`{"env":"x"}`)}),
		llm.ScriptText("done"))}
	h := newTestHost(t, HostConfig{Conn: testNATS(t)(), Store: store, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err := h.Register(&AgentSpec{Name: "a", Model: armsOnReply{model}, Tools: []toolsets.Tool{coreTool(t, "echo")}}); err != nil {
		t.Fatal(err)
	}
	store.armed.Store(true)
	outcomes, stop := h.Watch("r1")
	defer stop()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := h.Command(ctx, "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"}); err != nil {
		t.Fatal(err)
	}
	var o Outcome
	select {
	case o = <-outcomes:
	case <-ctx.Done():
		t.Fatalf("the watcher heard nothing of the lost run; host log:\n%s", logs.String())
	}
	if o.Lost == nil || !errors.Is(o.Lost, ErrUnavailable) || o.Status != "" || o.Status.Settled() || o.RunID != "r1" || o.SessionID != "s1" {
		t.Fatalf("outcome %q %+v, lost %v; want a lost run r1 of s1 (unavailable, no status)", o.Status, o.Error, o.Lost)
	}
	if l := logs.String(); !strings.Contains(l, "session actor panicked") || strings.Contains(l, "message=*actors.command") {
		t.Fatalf("the panic did not come in the actor's handling of a message other than a command:\n%s", l)
	}
	evs, err := store.ReadStream(t.Context(), events.SessionStream("s1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		switch ev.Type {
		case events.TypeRunFailed, events.TypeRunCompleted, events.TypeRunCancelled, events.TypeRunWaiting:
			t.Fatalf("log holds %s after the unrecorded failure; want the run left running", ev.Type)
		}
	}

	model.armed.Store(false)
	store.armed.Store(false)
	if _, err := h.Command(ctx, "s1", VerbStart, StartCommand{RunID: "r2", Agent: "a", Prompt: "hi"}); !errors.Is(err, ErrSessionBusy) {
		t.Fatalf("start while r1 runs: %v, want busy", err)
	}
	if o := waitOutcome(t, outcomes); o.Lost != nil || o.Status != StatusCompleted || o.Output != "done" {
		t.Fatalf("r1 carried on by the next actor: %s %q (%v, lost %v)", o.Status, o.Output, o.Error, o.Lost)
	}
}
