package weft_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// gateStore holds the first append of a run.started event until release
// is closed, telling held when it arrived.
type gateStore struct {
	events.Store
	once    sync.Once
	held    chan struct{}
	release chan struct{}
}

func (g *gateStore) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	for _, ev := range evs {
		if ev.Type == events.TypeRunStarted {
			hold := false
			g.once.Do(func() { hold = true })
			if hold {
				close(g.held)
				<-g.release
			}
		}
	}
	return g.Store.Append(ctx, stream, expected, evs...)
}

// A caller whose ctx ends while its start command is still being acted on
// (the session appends run.started after the caller gave up) must not
// leave the run going on without it: Run sends a cancel, which the session
// takes after the start, and the run's tool sees it.
func TestRunCancelledWhileStartInFlight(t *testing.T) {
	store := &gateStore{Store: memstore.New(), held: make(chan struct{}), release: make(chan struct{})}
	// The log line Run writes as it sends the cancel shows that it gave
	// up on the start (the command itself goes to the session's actor in
	// this process, not over NATS).
	cancels := make(chan slog.Record, 4)
	logger := slog.New(recordHandler(func(r slog.Record) {
		if strings.HasPrefix(r.Message, "cancelling the run") {
			select {
			case cancels <- r:
			default:
			}
		}
	}))
	rt, err := weft.Start(t.Context(), weft.Config{Store: store, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	block := tool(t, "block", func(ctx context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return "the run was not cancelled", nil
		}
	})
	model := llm.NewScripted(llm.ScriptToolCalls(call("b", "block", `{}`)), llm.ScriptText("never"))
	sess := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{block}}).NewSession()

	ctx, cancel := context.WithCancel(t.Context())
	runErr := make(chan error, 1)
	go func() {
		_, err := sess.Run(ctx, "go")
		runErr <- err
	}()
	<-store.held // the session is appending run.started
	cancel()
	select {
	case <-cancels:
	case <-time.After(30 * time.Second):
		close(store.release)
		t.Fatal("Run sent no cancel after its ctx ended during the start command")
	}
	close(store.release)
	if err := <-runErr; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	// The session takes the cancel after the start: the run ends
	// cancelled (before or while its tool runs), not completed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs := streamEvents(t, rt, sess.ID())
		last := evs[len(evs)-1].Type
		if last == events.TypeRunCancelled {
			break
		}
		if last == events.TypeRunCompleted || time.Now().After(deadline) {
			t.Fatalf("the run started after its caller gave up went on: last event %s, want %s", last, events.TypeRunCancelled)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Closing the runtime while a run is under way ends the callers waiting on
// it (Run, Wait, RunStream) with ErrClosed instead of leaving them until
// their ctx ends; a call after Close fails with ErrClosed too.
func TestCloseEndsWaitingCallers(t *testing.T) {
	rt, err := weft.Start(t.Context(), weft.Config{Store: memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	started := make(chan struct{}, 3)
	block := tool(t, "block", func(ctx context.Context, _ *toolsets.ToolContext, _ noArgs) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	callBlock := llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		r := llm.ScriptToolCalls(call("c1", "block", `{}`))
		return &r, nil
	})
	a, err := rt.NewAgent("closer", weft.AgentConfig{Model: callBlock, Tools: []toolsets.Tool{block}})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 3)
	s := a.NewSession()
	go func() {
		_, err := s.Run(t.Context(), "go")
		ended <- err
	}()
	<-started
	st, err := s.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	run, ok := st.ActiveRun()
	if !ok {
		t.Fatal("no active run")
	}
	go func() {
		_, err := s.Wait(t.Context(), run.ID)
		ended <- err
	}()
	go func() {
		var last error
		for _, err := range a.NewSession().RunStream(t.Context(), "go") {
			last = err
		}
		ended <- last
	}()
	<-started
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case err := <-ended:
			if !errors.Is(err, weft.ErrClosed) {
				t.Errorf("a waiting caller ended with %v, want ErrClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a waiting caller still waits after Close")
		}
	}
	if _, err := a.NewSession().Run(t.Context(), "go"); !errors.Is(err, weft.ErrClosed) {
		t.Errorf("Run after Close: %v, want ErrClosed", err)
	}
}

// recordHandler is a slog handler that hands every record to fn.
type recordHandler func(slog.Record)

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h(r)
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }
