package toolsets_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

// probe is a dynamic toolset that records its hooks and can be told to
// fail or stall in each.
type probe struct {
	tools []toolsets.Tool

	mu                                  sync.Mutex
	calls                               []string
	enterErr, prepareErr, exitErr       error
	stallPrepare, stallExit, stallEnter time.Duration
	ignoreCtx                           bool
}

func (p *probe) Info() toolsets.ToolsetInfo {
	return toolsets.ToolsetInfo{Name: "probe", ID: "probe-id"}
}

func (p *probe) record(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, s)
}

func (p *probe) Calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

func (p *probe) stall(ctx context.Context, d time.Duration) error {
	if d == 0 {
		return nil
	}
	if p.ignoreCtx {
		time.Sleep(d)
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func (p *probe) Enter(ctx context.Context, tc *toolsets.ToolsetContext) error {
	p.record("enter " + tc.RunID)
	if err := p.stall(ctx, p.stallEnter); err != nil {
		return err
	}
	return p.enterErr
}

func (p *probe) Prepare(ctx context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	p.record("prepare " + tc.RunID)
	if err := p.stall(ctx, p.stallPrepare); err != nil {
		return toolsets.Preparation{}, err
	}
	if p.prepareErr != nil {
		return toolsets.Preparation{}, p.prepareErr
	}
	return toolsets.Preparation{Tools: p.tools, Instructions: []toolsets.Instruction{{Group: "probe", Text: "one"}, {Group: "probe", Text: "two"}}}, nil
}

func (p *probe) Refresh(ctx context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	p.record("refresh " + tc.RunID)
	return toolsets.Preparation{Tools: p.tools[:1]}, nil
}

func (p *probe) Exit(ctx context.Context, tc *toolsets.ToolsetContext) error {
	p.record("exit " + tc.RunID)
	if err := p.stall(ctx, p.stallExit); err != nil {
		return err
	}
	return p.exitErr
}

func TestLifecycleRun(t *testing.T) {
	p := &probe{tools: []toolsets.Tool{namedTool(t, "a"), namedTool(t, "b")}}
	l := toolsets.NewLifecycle(p)
	tc := &toolsets.ToolsetContext{RunID: "r1"}
	var reports []toolsets.LifecycleReport
	prep, r, err := l.Prepare(t.Context(), tc)
	if err != nil {
		t.Fatal(err)
	}
	reports = append(reports, r)
	if len(prep.Tools) != 2 {
		t.Errorf("first preparation has %d tools", len(prep.Tools))
	}
	// The approval resume re-prepares the same run: a refresh.
	if _, r, err = l.Prepare(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	reports = append(reports, r)
	if r, err = l.Exit(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	reports = append(reports, r)
	want := []toolsets.LifecycleReport{
		{Name: "probe", ID: "probe-id", State: toolsets.StateInitialized, ToolCount: 2, InstructionCount: 2},
		{Name: "probe", ID: "probe-id", State: toolsets.StateRefreshed, ToolCount: 1},
		{Name: "probe", ID: "probe-id", State: toolsets.StateClosed},
	}
	if diff := cmp.Diff(want, reports); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"enter r1", "prepare r1", "refresh r1", "exit r1"}, p.Calls()); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
	// A new run enters again.
	if _, r, _ = l.Prepare(t.Context(), &toolsets.ToolsetContext{RunID: "r2"}); r.State != toolsets.StateInitialized {
		t.Errorf("second run state = %s", r.State)
	}
}

func TestLifecyclePolicies(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		policy    *toolsets.LifecyclePolicy
		setup     func(*probe)
		prepState toolsets.LifecycleState
		prepErr   error
		exitState toolsets.LifecycleState
		exitErr   error
		calls     []string
	}{
		{"default", nil, nil, toolsets.StateInitialized, nil, toolsets.StateClosed, nil,
			[]string{"enter r", "prepare r", "exit r"}},
		{"skip enter and exit", &toolsets.LifecyclePolicy{SkipEnter: true, SkipExit: true}, nil, toolsets.StateInitialized, nil, toolsets.StateClosed, nil,
			[]string{"prepare r"}},
		{"enter fails", nil, func(p *probe) { p.enterErr = boom }, toolsets.StateFailed, boom, toolsets.StateClosed, nil,
			[]string{"enter r"}},
		{"prepare fails", nil, func(p *probe) { p.prepareErr = boom }, toolsets.StateFailed, boom, toolsets.StateClosed, nil,
			[]string{"enter r", "prepare r", "exit r"}},
		{"unavailable leaves the run going", nil, func(p *probe) { p.prepareErr = toolsets.Unavailable("server down") }, toolsets.StateUnavailable, nil, toolsets.StateClosed, nil,
			[]string{"enter r", "prepare r", "exit r"}},
		{"unavailable fails when asked", &toolsets.LifecyclePolicy{FailWhenUnavailable: true}, func(p *probe) { p.prepareErr = toolsets.Unavailable("server down") }, toolsets.StateUnavailable, toolsets.ErrUnavailable, toolsets.StateClosed, nil,
			[]string{"enter r", "prepare r", "exit r"}},
		{"exit fails", nil, func(p *probe) { p.exitErr = boom }, toolsets.StateInitialized, nil, toolsets.StateFailed, boom,
			[]string{"enter r", "prepare r", "exit r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &probe{tools: []toolsets.Tool{namedTool(t, "a")}}
			if tt.setup != nil {
				tt.setup(p)
			}
			var ts toolsets.Toolset = p
			if tt.policy != nil {
				w, err := toolsets.WithLifecycle(p, *tt.policy)
				if err != nil {
					t.Fatal(err)
				}
				ts = w
			}
			l := toolsets.NewLifecycle(ts)
			tc := &toolsets.ToolsetContext{RunID: "r"}
			_, r, err := l.Prepare(t.Context(), tc)
			if !errors.Is(err, tt.prepErr) || r.State != tt.prepState {
				t.Errorf("prepare: state %s err %v, want %s %v", r.State, err, tt.prepState, tt.prepErr)
			}
			var le *toolsets.LifecycleError
			if err != nil && (!errors.As(err, &le) || le.ID != "probe-id") {
				t.Errorf("prepare error %v is not a LifecycleError with the toolset id", err)
			}
			if r.State == toolsets.StateFailed && !strings.Contains(r.Message, "boom") {
				t.Errorf("failed report message %q does not give the cause", r.Message)
			}
			r, err = l.Exit(t.Context(), tc)
			if !errors.Is(err, tt.exitErr) || r.State != tt.exitState {
				t.Errorf("exit: state %s err %v, want %s %v", r.State, err, tt.exitState, tt.exitErr)
			}
			if diff := cmp.Diff(tt.calls, p.Calls()); diff != "" {
				t.Errorf("hooks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLifecycleTimeouts(t *testing.T) {
	tests := []struct {
		name      string
		policy    toolsets.LifecyclePolicy
		setup     func(*probe)
		phase     toolsets.Phase
		ignoreCtx bool
	}{
		{"prepare past the read timeout", toolsets.LifecyclePolicy{ReadTimeout: time.Second}, func(p *probe) { p.stallPrepare = time.Minute }, toolsets.PhasePrepare, false},
		{"prepare that ignores its ctx", toolsets.LifecyclePolicy{ReadTimeout: time.Second}, func(p *probe) { p.stallPrepare = time.Minute; p.ignoreCtx = true }, toolsets.PhasePrepare, true},
		{"enter past the init timeout", toolsets.LifecyclePolicy{InitTimeout: time.Second}, func(p *probe) { p.stallEnter = time.Minute }, toolsets.PhaseEnter, false},
		{"exit past the exit timeout", toolsets.LifecyclePolicy{ExitTimeout: time.Second}, func(p *probe) { p.stallExit = time.Minute }, toolsets.PhaseExit, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := &probe{tools: []toolsets.Tool{namedTool(t, "a")}}
				tt.setup(p)
				ts, err := toolsets.WithLifecycle(p, tt.policy)
				if err != nil {
					t.Fatal(err)
				}
				l := toolsets.NewLifecycle(ts)
				tc := &toolsets.ToolsetContext{RunID: "r"}
				var r toolsets.LifecycleReport
				if tt.phase == toolsets.PhaseExit {
					if _, _, err := l.Prepare(t.Context(), tc); err != nil {
						t.Fatal(err)
					}
					r, err = l.Exit(t.Context(), tc)
				} else {
					_, r, err = l.Prepare(t.Context(), tc)
				}
				var te *toolsets.TimeoutError
				var le *toolsets.LifecycleError
				if !errors.As(err, &te) || !errors.As(err, &le) || le.Phase != tt.phase {
					t.Fatalf("err = %v, want a %s timeout", err, tt.phase)
				}
				if te.After != time.Second || !strings.Contains(err.Error(), "timed out") {
					t.Errorf("err = %q, want it to say it timed out after 1s", err)
				}
				if r.State != toolsets.StateFailed || !strings.Contains(r.Message, "timed out") {
					t.Errorf("report = %+v", r)
				}
				l.Wait()
			})
		})
	}
}

func TestLifecyclePolicyValidate(t *testing.T) {
	if _, err := toolsets.WithLifecycle(staticSet(t, "s", "a"), toolsets.LifecyclePolicy{ReadTimeout: -time.Second}); !errors.Is(err, toolsets.ErrInvalidWrapper) {
		t.Errorf("err = %v, want ErrInvalidWrapper", err)
	}
	outer := toolsets.LifecyclePolicy{SkipExit: true}
	inner, _ := toolsets.WithLifecycle(staticSet(t, "s", "a"), toolsets.LifecyclePolicy{SkipEnter: true})
	pref, _ := toolsets.Prefixed(inner, "p")
	if got, ok := toolsets.PolicyOf(pref); !ok || got != (toolsets.LifecyclePolicy{SkipEnter: true}) {
		t.Errorf("policy through a prefix = %+v, %v", got, ok)
	}
	w, _ := toolsets.WithLifecycle(pref, outer)
	if got := toolsets.NewLifecycle(w).Policy(); got != outer {
		t.Errorf("outermost policy = %+v, want %+v", got, outer)
	}
	if _, ok := toolsets.PolicyOf(staticSet(t, "s", "a")); ok {
		t.Errorf("a static toolset has a policy")
	}
}
