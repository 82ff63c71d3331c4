package actors

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// The session core's given/when/then suite: given prior events (folded by
// given, state_test.go) and the facts of the run, when an input comes, then
// the events the core appends and the effects it asks for. No actor, NATS
// or store is involved.

// testLookups are the core's lookups: the agents by name, the remote
// tools.
type testLookups struct {
	agents map[string]*AgentSpec
	remote map[string]bool
}

func (l testLookups) Agent(name string) (*AgentSpec, bool) { s, ok := l.agents[name]; return s, ok }
func (l testLookups) IsRemoteTool(name string) bool        { return l.remote[name] }
func (l testLookups) AgentVersion(name, _ string) (*AgentSpec, bool) {
	s, ok := l.agents[name]
	return s, ok
}

// coreTool is a tool with arguments {"env": string}.
func coreTool(t testing.TB, name string, opts ...toolsets.Option) toolsets.Tool {
	t.Helper()
	tl, err := toolsets.NewFunc(name, func(_ context.Context, a struct {
		Env string `json:"env"`
	}) (string, error) {
		return a.Env, nil
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// coreAgent is agent "a" (the agent of started()): loose tools echo,
// deploy (caught by the approval policy), seq (sequential), safe
// (concurrent-safe) and far (served remotely in remoteWorld), and a
// toolset "ops" with tool restart.
func coreAgent(t *testing.T, edit func(*AgentSpec)) *AgentSpec {
	t.Helper()
	ops, err := toolsets.New("ops", []toolsets.Tool{coreTool(t, "restart")})
	if err != nil {
		t.Fatal(err)
	}
	spec := &AgentSpec{Name: "a", Model: llm.AlwaysText("done"),
		Tools: []toolsets.Tool{coreTool(t, "echo"), coreTool(t, "deploy"), coreTool(t, "seq", toolsets.WithSequential(true)),
			coreTool(t, "safe", toolsets.WithConcurrentSafe(true)), coreTool(t, "far")},
		Toolsets: []toolsets.Toolset{ops}, ApprovalRequired: []string{"deploy"}}
	if edit != nil {
		edit(spec)
	}
	pol, err := compilePolicy(spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.approval = pol
	return spec
}

// prepared returns spec's inventory of one step.
func prepared(t *testing.T, spec *AgentSpec) *Prepared {
	t.Helper()
	lcs := make([]*toolsets.Lifecycle, len(spec.Toolsets))
	for i, ts := range spec.Toolsets {
		lcs[i] = toolsets.NewLifecycle(ts)
	}
	prep, _, err := (*Host)(nil).prepareRun(t.Context(), spec, lcs, &toolsets.ToolsetContext{RunID: rid, SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	return prep
}

// world is what a case runs the core with: the agent, the remote tools,
// the facts (prepared for the state's step unless a case says otherwise)
// and the payload limit.
type world struct {
	spec   *AgentSpec
	remote []string
	maxMsg int
}

// coreOf returns the core given st, with facts f.
func (w world) coreOf(st *SessionState, f runFacts) core {
	remote := map[string]bool{}
	for _, n := range w.remote {
		remote[n] = true
	}
	maxMsg := w.maxMsg
	if maxMsg == 0 {
		maxMsg = DefaultMaxPayloadBytes
	}
	return core{session: sid, st: st, f: f, look: testLookups{agents: map[string]*AgentSpec{"a": w.spec}, remote: remote}, maxMsg: maxMsg}
}

// factsOf are the facts of run rid in st, its tools prepared for its
// current step.
func factsOf(st *SessionState, spec *AgentSpec, prep *Prepared) runFacts {
	step := 0
	if r := st.Run(rid); r != nil {
		step = r.Step
	}
	return runFacts{run: rid, spec: spec, toolsets: len(spec.Toolsets) > 0, prep: prep, last: prep, prepStep: step, inFlight: map[string]bool{}}
}

// evt is an event a decision appends: its type, call id, typed data (nil
// in an expectation: not compared) and, for tool.returned, its return's
// kind.
type evt struct {
	Type events.Type
	Call string
	Data any
	Kind toolsets.Kind
}

// eventsOf returns d's events as evts, the data of those want leaves nil
// left out.
func eventsOf(d decision, want []evt) []evt {
	var out []evt
	for i, rec := range d.recs {
		e := evt{Type: rec.Type, Call: rec.ToolCallID, Data: rec.data}
		if ret, ok := rec.extra.(toolsets.Return); ok && rec.Type == events.TypeToolReturned {
			e.Kind = ret.Kind
		}
		if i < len(want) && want[i].Data == nil {
			e.Data = nil
		}
		out = append(out, e)
	}
	return out
}

// coreOpts compare events and effects by what they mean: JSON the core
// encoded (messages, returns) and model requests are left out, errors are
// compared by their command error code.
var coreOpts = cmp.Options{
	cmp.AllowUnexported(effReply{}, effPrepare{}, effCallModel{}, effDispatch{}),
	cmpopts.IgnoreFields(effDispatch{}, "batch"),
	cmpopts.IgnoreFields(events.ModelRequest{}, "Messages"),
	cmpopts.IgnoreFields(events.ModelResponse{}, "Message"),
	cmpopts.IgnoreFields(events.ToolReturned{}, "Return"),
	cmpopts.IgnoreFields(ToolRequest{}, "Arguments"),
	cmp.Transformer("run", func(r *llm.Request) llm.RunInfo { return r.Run }),
	cmp.Comparer(func(a, b error) bool { return errCode(a) == errCode(b) }),
	cmpopts.EquateEmpty(),
}

func errCode(err error) string {
	var ce *CommandError
	if errors.As(err, &ce) {
		return ce.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// then checks decision d against the expected events, effects and whether
// it carries on.
func then(t *testing.T, d decision, events []evt, effects []effect, carryOn bool) {
	t.Helper()
	if diff := cmp.Diff(events, eventsOf(d, events), coreOpts); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(effects, d.effects.list(), coreOpts); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	if d.carryOn != carryOn {
		t.Errorf("carry on = %v, want %v", d.carryOn, carryOn)
	}
}

// A few common events of run rid.
func requestEv() events.Event { return ev(events.TypeModelRequest, "", events.ModelRequest{}) }

func callOf(id, tool, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: tool, Arguments: json.RawMessage(args)}
}

// batchOf is the events of a model response asking for calls, each
// requested, and its usage snapshot.
func batchOf(calls ...llm.ToolCall) []events.Event {
	evs := []events.Event{requestEv(), response(calls...)}
	for _, c := range calls {
		evs = append(evs, ev(events.TypeToolRequested, c.ID, events.NewToolRequested(c.Name, "", c.Arguments)))
	}
	return append(evs, ev(events.TypeUsageSnapshot, "", events.UsageSnapshot{Scope: "run", Usage: events.Usage{ToolCalls: int64(len(calls))}}))
}

func concat(parts ...[]events.Event) []events.Event {
	var out []events.Event
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// failed is run.failed of kind and msg, with the run's usage u.
func failed(kind, msg string, u events.Usage) evt {
	return evt{Type: events.TypeRunFailed, Data: events.RunFailed{Error: events.ErrorInfo{Kind: kind, Message: msg}, Usage: &u}}
}

// The facts a decision leaves are the input's, but for what it changed;
// performed adds what an effect puts under way.
func TestFactsPerformed(t *testing.T) {
	f := runFacts{run: rid, forBatch: true, inFlight: map[string]bool{"a": true}}
	got := f.performed(effPrepare{run: rid, step: 2, forBatch: true})
	if !got.preparing || got.prepStep != 2 || got.forBatch {
		t.Errorf("after prepare: %+v", got)
	}
	if got = f.performed(effCallModel{}); !got.modelBusy {
		t.Errorf("after a model call: %+v", got)
	}
	got = f.performed(effDispatch{run: rid, calls: []ToolRequest{{CallID: "b"}}})
	if !got.batching || !maps.Equal(got.inFlight, map[string]bool{"a": true, "b": true}) {
		t.Errorf("after dispatch: %+v", got)
	}
	if !maps.Equal(f.inFlight, map[string]bool{"a": true}) {
		t.Errorf("dispatch changed the facts it was given: %v", f.inFlight)
	}
}

// list returns the effects as a slice (nil for none).
func (es effects) list() []effect {
	if es.first == nil {
		return nil
	}
	return append([]effect{es.first}, es.more...)
}
