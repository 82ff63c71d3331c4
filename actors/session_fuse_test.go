package actors

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// stepStore records the types of every append and, with fail, fails once
// the append that holds both run.started and model.request: storing
// nothing, or (prefix) storing run.started only, as a pipelined
// AppendSteps may.
type stepStore struct {
	*memstore.Store
	fail   bool
	prefix bool
	mu     sync.Mutex
	failed bool
	log    [][]events.Type
}

var errStepFailed = errors.New("test: the store failed part way")

func (s *stepStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	return s.append(ctx, stream, exp, evs)
}

func (s *stepStore) AppendSteps(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Event) (events.AppendResult, error) {
	return s.append(ctx, stream, exp, evs)
}

func (s *stepStore) append(ctx context.Context, stream string, exp events.ExpectedVersion, evs []events.Event) (events.AppendResult, error) {
	types := make([]events.Type, len(evs))
	for i, ev := range evs {
		types[i] = ev.Type
	}
	s.mu.Lock()
	s.log = append(s.log, types)
	fail := s.fail && !s.failed && slices.Contains(types, events.TypeRunStarted) && slices.Contains(types, events.TypeModelRequest)
	if fail {
		s.failed = true
	}
	s.mu.Unlock()
	if !fail {
		return s.Store.Append(ctx, stream, exp, evs...)
	}
	if !s.prefix {
		return events.AppendResult{}, errStepFailed
	}
	res, err := s.Store.Append(ctx, stream, exp, evs[0])
	if err != nil {
		return res, err
	}
	return res, errStepFailed
}

func (s *stepStore) appends() [][]events.Type {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// fuseHost is a host on store whose agent "a" asks for calls calls of
// tool echo (concurrent-safe) in one response, then answers "done".
func fuseHost(tb testing.TB, store events.Store, calls int) *Host {
	tb.Helper()
	h := newTestHost(tb, HostConfig{Conn: testNATS(tb)(), Store: store})
	asks := make([]llm.ToolCall, calls)
	for i := range asks {
		asks[i] = llm.ToolCall{ID: "c" + strconv.Itoa(i+1), Name: "echo", Arguments: json.RawMessage(`{"env":"prod"}`)}
	}
	model := llm.NewScripted(llm.ScriptToolCalls(asks...), llm.ScriptText("done"))
	if err := h.Register(&AgentSpec{Name: "a", Model: model, Tools: []toolsets.Tool{coreTool(tb, "echo", toolsets.WithConcurrentSafe(true))}}); err != nil {
		tb.Fatal(err)
	}
	return h
}

// A one-call run appends in four or five round trips: run.started goes
// with the first model.request, and the call's return with the next
// request.
func TestFusedAppendsOfAOneCallRun(t *testing.T) {
	store := &stepStore{Store: memstore.New()}
	h := fuseHost(t, store, 1)
	outcomes, stop := h.Watch("r1")
	defer stop()
	reply, err := h.Command(t.Context(), "s1", VerbStart, StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Version != 1 {
		t.Errorf("start answered with version %d, want 1 (its own run.started)", reply.Version)
	}
	if o := waitOutcome(t, outcomes); o.Status != StatusCompleted || o.Output != "done" {
		t.Fatalf("outcome %s %q (%v)", o.Status, o.Output, o.Error)
	}
	// tool.started goes alone when the actor reads it before the call
	// returns, else with tool.returned.
	got := store.appends()
	if n := len(got); n < 4 || n > 5 {
		t.Fatalf("%d appends, want 4 or 5: %v", n, got)
	}
	want := map[int][]events.Type{
		0:            {events.TypeRunStarted, events.TypeModelRequest},
		1:            {events.TypeModelResponse, events.TypeToolRequested, events.TypeUsageSnapshot},
		len(got) - 2: {events.TypeToolReturned, events.TypeModelRequest},
		len(got) - 1: {events.TypeModelResponse, events.TypeUsageSnapshot, events.TypeRunCompleted},
	}
	if len(got) == 4 {
		want[2] = append([]events.Type{events.TypeToolStarted}, want[2]...)
	} else {
		want[2] = []events.Type{events.TypeToolStarted}
	}
	for i, w := range want {
		if diff := cmp.Diff(w, got[i]); diff != "" {
			t.Errorf("append %d (-want +got):\n%s", i, diff)
		}
	}
	verifyStream(t, store, "s1")
}

// A fused append that fails answers the start with the error, the actor
// reads its stream again (the held events may be stored in part: a
// pipeline stores a prefix), and the caller's retry of the start with its
// run id carries the run on to its end, run.started recorded once.
func TestFusedAppendFailure(t *testing.T) {
	for _, prefix := range []bool{false, true} {
		name := map[bool]string{false: "nothing stored", true: "run.started stored"}[prefix]
		t.Run(name, func(t *testing.T) {
			store := &stepStore{Store: memstore.New(), fail: true, prefix: prefix}
			h := fuseHost(t, store, 1)
			outcomes, stop := h.Watch("r1")
			defer stop()
			start := StartCommand{RunID: "r1", Agent: "a", Prompt: "hi"}
			if _, err := h.Command(t.Context(), "s1", VerbStart, start); !errors.Is(err, ErrInternal) {
				t.Fatalf("start: error %v, want the failed append's (internal)", err)
			}
			st, err := h.ReadSession(t.Context(), "s1")
			if err != nil && !errors.Is(err, events.ErrStreamNotFound) {
				t.Fatal(err)
			}
			if got, want := st != nil && st.Run("r1") != nil, prefix; got != want {
				t.Fatalf("run stored after the failure: %v, want %v", got, want)
			}
			if _, err := h.Command(t.Context(), "s1", VerbStart, start); err != nil {
				t.Fatalf("retried start: %v", err)
			}
			if o := waitOutcome(t, outcomes); o.Status != StatusCompleted || o.Output != "done" {
				t.Fatalf("outcome %s %q (%v)", o.Status, o.Output, o.Error)
			}
			evs := verifyStream(t, store, "s1")
			var starts, requests int
			for _, ev := range evs {
				switch ev.Type {
				case events.TypeRunStarted:
					starts++
				case events.TypeModelRequest:
					requests++
				}
			}
			if starts != 1 || requests != 2 {
				t.Fatalf("%d run.started and %d model.request, want 1 and 2", starts, requests)
			}
		})
	}
}

// verifyStream reads the session's stream and checks its hash chain.
func verifyStream(t *testing.T, store events.Store, session string) []events.Event {
	t.Helper()
	evs, err := store.ReadStream(t.Context(), events.SessionStream(session), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := events.VerifyChain(evs); err != nil {
		t.Fatalf("chain: %v", err)
	}
	return evs
}
