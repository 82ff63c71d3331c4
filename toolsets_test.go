package weft_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// staticToolset builds a static toolset named name over tools.
func staticToolset(t *testing.T, name string, tools ...toolsets.Tool) toolsets.Toolset {
	t.Helper()
	ts, err := toolsets.New(name, tools, toolsets.WithID(name), toolsets.WithInstructions("use "+name))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func okTool(t *testing.T, name string, runs *atomic.Int32) toolsets.Tool {
	return tool(t, name, func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
		if runs != nil {
			runs.Add(1)
		}
		return name + " ok", nil
	})
}

// toolNames returns the tool names of a model request.
func toolNames(req *llm.Request) []string {
	var out []string
	for _, d := range req.Tools {
		out = append(out, d.Name)
	}
	return out
}

// runEvents returns the events of the run, closed reports included.
func runEvents(t *testing.T, sess *weft.Session, runID string) []events.Event {
	t.Helper()
	evs, err := sess.Events(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func reports(t *testing.T, evs []events.Event) []toolsets.LifecycleReport {
	t.Helper()
	reps, err := weft.LifecycleReports(evs)
	if err != nil {
		t.Fatal(err)
	}
	return reps
}

// Issue 5 point 1: toolsets attach at agent construction or per run; tools
// with the same name in two toolsets fail preparation naming the duplicate.
func TestToolsetsPerAgentAndPerRun(t *testing.T) {
	rt := newRuntime(t)
	var agentRuns, runRuns atomic.Int32
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("a", "lookup", `{}`), call("b", "extra", `{}`)), llm.ScriptText("done"),
		llm.ScriptText("second run"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{staticToolset(t, "workspace", okTool(t, "lookup", &agentRuns))}})
	sess := a.NewSession()
	res, err := sess.Run(t.Context(), "go", weft.WithToolsets(staticToolset(t, "per_run", okTool(t, "extra", &runRuns))))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if agentRuns.Load() != 1 || runRuns.Load() != 1 {
		t.Errorf("calls: agent toolset %d, run toolset %d; want 1 and 1", agentRuns.Load(), runRuns.Load())
	}
	if diff := cmp.Diff([]string{"lookup", "extra"}, toolNames(model.Requests()[0])); diff != "" {
		t.Errorf("first request tools (-want +got):\n%s", diff)
	}
	// The next run of the session does not see the per-run toolset.
	if _, err := sess.Run(t.Context(), "again"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"lookup"}, toolNames(model.Requests()[2])); diff != "" {
		t.Errorf("second run tools (-want +got):\n%s", diff)
	}
}

// Issue 11 point 11: a preparation that offers one tool name twice fails
// the later toolset (toolset.failed naming both owners) and the run; the
// log never shows the later toolset as initialized.
func TestDuplicateToolNamesFailPreparation(t *testing.T) {
	tests := []struct {
		name       string
		loose      bool     // the agent has its own tool "lookup"
		agent      []string // toolset names at the agent
		perRun     bool
		wantInit   []string // toolset.initialized
		wantFailed string   // the toolset of the toolset.failed
		wantNames  []string // what the failure names
	}{
		{name: "two agent toolsets", agent: []string{"one", "two"},
			wantInit: []string{"one"}, wantFailed: "two", wantNames: []string{`"lookup"`, `toolset "one"`, `toolset "two"`}},
		{name: "agent and run toolset", agent: []string{"one"}, perRun: true,
			wantInit: []string{"one"}, wantFailed: "run_tools", wantNames: []string{`"lookup"`, `toolset "one"`, `toolset "run_tools"`}},
		{name: "the agent's own tool and a toolset", loose: true, agent: []string{"one"},
			wantFailed: "one", wantNames: []string{`"lookup"`, "the agent's own tools", `toolset "one"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			var tss []toolsets.Toolset
			for _, n := range tt.agent {
				tss = append(tss, staticToolset(t, n, okTool(t, "lookup", nil)))
			}
			cfg := weft.AgentConfig{Model: llm.AlwaysText("never"), Toolsets: tss}
			if tt.loose {
				cfg.Tools = []toolsets.Tool{okTool(t, "lookup", nil)}
			}
			sess := newAgent(t, rt, cfg).NewSession()
			var opts []weft.RunOption
			if tt.perRun {
				opts = append(opts, weft.WithToolsets(staticToolset(t, "run_tools", okTool(t, "lookup", nil))))
			}
			res, err := sess.Run(t.Context(), "go", opts...)
			var re *weft.RunError
			if !errors.As(err, &re) || re.Kind != "toolset_error" {
				t.Fatalf("run = %+v, err %v; want a toolset_error", res, err)
			}
			for _, n := range tt.wantNames {
				if !strings.Contains(re.Message, n) {
					t.Errorf("run error %q does not name %s", re.Message, n)
				}
			}
			var inits []string
			var failed []events.ToolsetFailed
			for _, ev := range runEvents(t, sess, res.RunID) {
				switch ev.Type {
				case events.TypeToolsetInitialized:
					d, err := events.DecodeAs[events.ToolsetInitialized](ev)
					if err != nil {
						t.Fatal(err)
					}
					inits = append(inits, d.Toolset)
				case events.TypeToolsetFailed:
					d, err := events.DecodeAs[events.ToolsetFailed](ev)
					if err != nil {
						t.Fatal(err)
					}
					failed = append(failed, d)
				}
			}
			if diff := cmp.Diff(tt.wantInit, inits); diff != "" {
				t.Errorf("toolset.initialized (-want +got):\n%s", diff)
			}
			if len(failed) != 1 || failed[0].Toolset != tt.wantFailed {
				t.Fatalf("toolset.failed = %+v; want one, of %q", failed, tt.wantFailed)
			}
			for _, n := range tt.wantNames {
				if !strings.Contains(failed[0].Error.Message, n) {
					t.Errorf("toolset.failed message %q does not name %s", failed[0].Error.Message, n)
				}
			}
		})
	}
}

// lifecycleProbe is a dynamic toolset that records its lifecycle calls.
type lifecycleProbe struct {
	mu    sync.Mutex
	calls []string
	ctxs  []toolsets.ToolsetContext
	delay time.Duration // Prepare sleeps this long (honouring ctx)
	tools []toolsets.Tool
}

func (p *lifecycleProbe) log(s string, tc *toolsets.ToolsetContext) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, s)
	p.ctxs = append(p.ctxs, *tc)
}

func (p *lifecycleProbe) Info() toolsets.ToolsetInfo {
	return toolsets.ToolsetInfo{Name: "probe", ID: "probe-id"}
}

func (p *lifecycleProbe) Enter(_ context.Context, tc *toolsets.ToolsetContext) error {
	p.log("enter", tc)
	return nil
}

func (p *lifecycleProbe) Prepare(ctx context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	p.log("prepare", tc)
	if p.delay > 0 {
		select {
		case <-time.After(p.delay):
		case <-ctx.Done():
			return toolsets.Preparation{}, context.Cause(ctx)
		}
	}
	return toolsets.Preparation{Tools: p.tools, Instructions: []toolsets.Instruction{{Group: "probe", Text: "run " + tc.RunID}}}, nil
}

func (p *lifecycleProbe) Refresh(_ context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	p.log("refresh", tc)
	return toolsets.Preparation{Tools: p.tools, Instructions: []toolsets.Instruction{{Group: "probe", Text: "refreshed " + tc.RunID}}}, nil
}

func (p *lifecycleProbe) Exit(_ context.Context, tc *toolsets.ToolsetContext) error {
	p.log("exit", tc)
	return nil
}

func (p *lifecycleProbe) snapshot() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

// Points 2 and 3: enter before prepare, refresh on later steps, exit after
// the run; each transition a toolset.* event carrying the report; the
// toolset context carries the run.
func TestDynamicToolsetLifecycle(t *testing.T) {
	rt := newRuntime(t)
	probe := &lifecycleProbe{}
	probe.tools = []toolsets.Tool{okTool(t, "probe_tool", nil)}
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "probe_tool", `{}`)), llm.ScriptText("done"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{probe},
		WorkspaceRoot: "ws", Resources: toolsets.ResourceMap{"db": "handle"}})
	sess := a.NewSession()
	res, err := sess.Run(t.Context(), "go", weft.WithMetadata(map[string]any{"tenant": "acme"}))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if diff := cmp.Diff([]string{"enter", "prepare", "refresh", "exit"}, probe.snapshot()); diff != "" {
		t.Errorf("lifecycle calls (-want +got):\n%s", diff)
	}
	tc := probe.ctxs[1]
	if tc.AgentID != a.Name() || tc.RunID != res.RunID || tc.SessionID != sess.ID() || tc.ConversationID != sess.ID() ||
		tc.WorkspaceRoot != "ws" || tc.Metadata["tenant"] != "acme" {
		t.Errorf("prepare context = %+v", tc)
	}
	if v, _ := tc.Resources.Resource("db"); v != "handle" {
		t.Errorf("resource db = %v", v)
	}
	if probe.ctxs[2].RunStep != 1 {
		t.Errorf("refresh step = %d, want 1", probe.ctxs[2].RunStep)
	}
	want := []toolsets.LifecycleReport{
		{Name: "probe", ID: "probe-id", State: toolsets.StateInitialized, ToolCount: 1, InstructionCount: 1},
		{Name: "probe", ID: "probe-id", State: toolsets.StateClosed},
	}
	if diff := cmp.Diff(want, reports(t, runEvents(t, sess, res.RunID))); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	// The instructions reach the model, per step.
	reqs := model.Requests()
	if !strings.Contains(reqs[0].Instructions, "run "+res.RunID) || !strings.Contains(reqs[1].Instructions, "refreshed "+res.RunID) {
		t.Errorf("instructions: %q / %q", reqs[0].Instructions, reqs[1].Instructions)
	}
}

// The reports are readable from the run's stream with LifecycleReports.
func TestLifecycleReportsFromStream(t *testing.T) {
	rt := newRuntime(t)
	probe := &lifecycleProbe{}
	a := newAgent(t, rt, weft.AgentConfig{Model: llm.AlwaysText("ready"), Toolsets: []toolsets.Toolset{probe}})
	var evs []events.Event
	for ev, err := range a.RunStream(t.Context(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	reps := reports(t, evs)
	if len(reps) != 1 || reps[0].State != toolsets.StateInitialized || reps[0].ID != "probe-id" || reps[0].InstructionCount != 1 {
		t.Fatalf("stream reports = %+v", reps)
	}
}

func TestLifecyclePolicy(t *testing.T) {
	tests := []struct {
		name      string
		probe     func() toolsets.Toolset
		policy    toolsets.LifecyclePolicy
		wantKind  string // run failure kind, "" for a completed run
		wantMsg   string
		wantState toolsets.LifecycleState // the first report's state
	}{
		{
			name:      "prepare past the read timeout fails the run",
			probe:     func() toolsets.Toolset { return &lifecycleProbe{delay: time.Minute} },
			policy:    toolsets.LifecyclePolicy{ReadTimeout: 20 * time.Millisecond},
			wantKind:  "toolset_error",
			wantMsg:   "timed out",
			wantState: toolsets.StateFailed,
		},
		{
			name: "unavailable is left out",
			probe: func() toolsets.Toolset {
				d, _ := toolsets.NewDynamic("flaky", toolsets.DynamicFuncs{Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
					return nil, toolsets.Unavailable("server down")
				}}, toolsets.WithID("flaky"))
				return d
			},
			wantState: toolsets.StateUnavailable,
		},
		{
			name: "unavailable fails the run when the policy says so",
			probe: func() toolsets.Toolset {
				d, _ := toolsets.NewDynamic("flaky", toolsets.DynamicFuncs{Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
					return nil, toolsets.Unavailable("server down")
				}}, toolsets.WithID("flaky"))
				return d
			},
			policy:    toolsets.LifecyclePolicy{FailWhenUnavailable: true},
			wantKind:  "toolset_error",
			wantMsg:   "server down",
			wantState: toolsets.StateUnavailable,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			ts, err := toolsets.WithLifecycle(tt.probe(), tt.policy)
			if err != nil {
				t.Fatal(err)
			}
			a := newAgent(t, rt, weft.AgentConfig{Model: llm.AlwaysText("ok"), Toolsets: []toolsets.Toolset{ts}})
			sess := a.NewSession()
			res, err := sess.Run(t.Context(), "go")
			var re *weft.RunError
			switch {
			case tt.wantKind == "" && err != nil:
				t.Fatalf("run failed: %v", err)
			case tt.wantKind != "" && (!errors.As(err, &re) || re.Kind != tt.wantKind || !strings.Contains(re.Message, tt.wantMsg)):
				t.Fatalf("run = %+v, err %v; want %s saying %q", res, err, tt.wantKind, tt.wantMsg)
			}
			reps := reports(t, runEvents(t, sess, res.RunID))
			if len(reps) == 0 || reps[0].State != tt.wantState {
				t.Fatalf("reports = %+v, want first %s", reps, tt.wantState)
			}
			if last := reps[len(reps)-1]; last.State != toolsets.StateClosed {
				t.Errorf("last report = %+v, want closed", last)
			}
		})
	}
}

// SkipEnter / SkipExit: the hooks are not called.
func TestLifecyclePolicySkips(t *testing.T) {
	rt := newRuntime(t)
	probe := &lifecycleProbe{}
	ts, err := toolsets.WithLifecycle(probe, toolsets.LifecyclePolicy{SkipEnter: true, SkipExit: true})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, rt, weft.AgentConfig{Model: llm.AlwaysText("ok"), Toolsets: []toolsets.Toolset{ts}})
	sess := a.NewSession()
	res, err := sess.Run(t.Context(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"prepare"}, probe.snapshot()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	reps := reports(t, runEvents(t, sess, res.RunID))
	if len(reps) != 2 || reps[1].State != toolsets.StateClosed || reps[1].Message != "exit skipped by policy" {
		t.Errorf("reports = %+v", reps)
	}
}

// Point 4: a factory is called per step by default, once per run when
// asked; it may return several toolsets.
func TestFactories(t *testing.T) {
	tests := []struct {
		name      string
		perStep   bool
		wantCalls int32
	}{
		{name: "per step", perStep: true, wantCalls: 2},
		{name: "per run", perStep: false, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			var calls atomic.Int32
			f, err := toolsets.NewFactory("workspace", func(_ context.Context, tc *toolsets.ToolsetContext) (any, error) {
				calls.Add(1)
				return []toolsets.Toolset{staticToolset(t, "files", okTool(t, "read_file", nil)), staticToolset(t, "notes", okTool(t, "note", nil))}, nil
			}, toolsets.PerRunStep(tt.perStep))
			if err != nil {
				t.Fatal(err)
			}
			model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "read_file", `{}`)), llm.ScriptText("done"))
			a := newAgent(t, rt, weft.AgentConfig{Model: model})
			sess := a.NewSession()
			res, err := sess.Run(t.Context(), "go", weft.WithToolsets(f))
			if err != nil || res.Status != weft.StatusCompleted {
				t.Fatalf("run = %+v, %v", res, err)
			}
			if calls.Load() != tt.wantCalls {
				t.Errorf("factory calls = %d, want %d", calls.Load(), tt.wantCalls)
			}
			if diff := cmp.Diff([]string{"read_file", "note"}, toolNames(model.Requests()[1])); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			reps := reports(t, runEvents(t, sess, res.RunID))
			if len(reps) != 2 || reps[0].Name != "workspace" || reps[0].ToolCount != 2 || reps[1].State != toolsets.StateClosed {
				t.Errorf("reports = %+v", reps)
			}
		})
	}
}

// Point 5: a prefixed, filtered, approval-required dynamic toolset,
// resumed after approval: the call runs exactly once, and the toolset is
// re-prepared with a refreshed report.
func TestWrappedDynamicToolsetApproval(t *testing.T) {
	rt := newRuntime(t)
	var reads, writes atomic.Int32
	probe := &lifecycleProbe{tools: []toolsets.Tool{okTool(t, "read_file", &reads), okTool(t, "write_file", &writes)}}
	ts, err := toolsets.Wrap(probe).Filtered(toolsets.Filter{Include: []string{"read_file"}}).Prefixed("ws").
		ApprovalRequired([]string{"*"}, "review workspace access").Toolset()
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "ws_read_file", `{}`)), llm.ScriptText("done"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}})
	sess := a.NewSession()
	waiting, err := sess.Run(t.Context(), "read")
	if err != nil || waiting.Status != weft.StatusWaiting || len(waiting.Pending.Approvals) != 1 {
		t.Fatalf("run = %+v, %v", waiting, err)
	}
	if p := waiting.Pending.Approvals[0]; p.Tool != "ws_read_file" || p.Reason != "review workspace access" {
		t.Errorf("pending = %+v", p)
	}
	if diff := cmp.Diff([]string{"ws_read_file"}, toolNames(model.Requests()[0])); diff != "" {
		t.Errorf("exposed tools (-want +got):\n%s", diff)
	}
	res, err := sess.Resume(t.Context(), weft.Approve("c1", "ui", nil))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("resume = %+v, %v", res, err)
	}
	if reads.Load() != 1 || writes.Load() != 0 {
		t.Errorf("read_file ran %d times, write_file %d; want 1 and 0", reads.Load(), writes.Load())
	}
	var states []toolsets.LifecycleState
	for _, r := range reports(t, runEvents(t, sess, res.RunID)) {
		states = append(states, r.State)
	}
	if diff := cmp.Diff([]toolsets.LifecycleState{toolsets.StateInitialized, toolsets.StateRefreshed, toolsets.StateClosed}, states); diff != "" {
		t.Errorf("report states (-want +got):\n%s", diff)
	}
	// enter, prepare (step 0), refresh (the approval resume, to run the
	// approved call), refresh (the next model request), exit.
	if diff := cmp.Diff([]string{"enter", "prepare", "refresh", "refresh", "exit"}, probe.snapshot()); diff != "" {
		t.Errorf("lifecycle calls (-want +got):\n%s", diff)
	}
}

// A deferred wrapper turns a call into a deferred item, completed with
// Resume.
func TestDeferredWrapper(t *testing.T) {
	rt := newRuntime(t)
	var runs atomic.Int32
	ts, err := toolsets.Defer(staticToolset(t, "worker", okTool(t, "build", &runs)), []string{"build"}, "external worker")
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(llm.ScriptToolCalls(call("b1", "build", `{}`)), llm.ScriptText("built"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}})
	sess := a.NewSession()
	waiting, err := sess.Run(t.Context(), "build")
	if err != nil || waiting.Status != weft.StatusWaiting || len(waiting.Pending.Deferred) != 1 || waiting.Pending.Deferred[0].Reason != "external worker" {
		t.Fatalf("run = %+v, %v", waiting, err)
	}
	res, err := sess.Resume(t.Context(), weft.Complete("b1", "worker-7", map[string]any{"artifact": "app.tar"}))
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "built" {
		t.Fatalf("resume = %+v, %v", res, err)
	}
	ret := lastUserMessage(t, model, 1).Parts[0].(llm.ToolReturn)
	if got := ret.ContentText(); !strings.Contains(got, "app.tar") {
		t.Errorf("deferred result given to the model = %s", got)
	}
	if runs.Load() != 0 {
		t.Errorf("the deferred tool ran %d times in process", runs.Load())
	}
}
