package weft_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// subrunAgents registers a lead that calls a scout and a deployer in
// parallel (the deployer's deploy needs an approval); with agentTools
// false, the lead's tools are plain tools of the same names, so the
// runtime has no agent tool and delivers nothing.
func subrunAgents(rt *weft.Runtime, agentTools bool) (lead, deployer *weft.Agent, err error) {
	deploy, err := toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
		if tc.Approval == nil {
			return "", toolsets.ApprovalRequired("production", nil)
		}
		return "deployed by " + tc.Approval.DecidedBy, nil
	})
	if err != nil {
		return nil, nil, err
	}
	scout, err := rt.NewAgent("scout", weft.AgentConfig{Model: llm.AlwaysText("the coast is clear")})
	if err != nil {
		return nil, nil, err
	}
	deployer, err = rt.NewAgent("deployer", weft.AgentConfig{Model: toolThenText("deploy", "deployed"), Tools: []toolsets.Tool{deploy}})
	if err != nil {
		return nil, nil, err
	}
	var tools []toolsets.Tool
	for _, a := range []*weft.Agent{scout, deployer} {
		var tl toolsets.Tool
		if agentTools {
			tl, err = weft.AgentTool(a)
		} else {
			tl, err = toolsets.NewFunc(a.Name(), func(context.Context, struct {
				Prompt string `json:"prompt"`
			}) (string, error) {
				return "", errors.New("not an agent tool")
			})
		}
		if err != nil {
			return nil, nil, err
		}
		tools = append(tools, tl)
	}
	lead, err = rt.NewAgent("lead", weft.AgentConfig{Model: twoDelegations(), Tools: tools})
	return lead, deployer, err
}

// waitingForSubrun runs "ship it" in a new session of a lead of
// subrunAgents and returns the session, the run, and the one sub-run item
// the run waits for (the deployer's approval).
func waitingForSubrun(t *testing.T, lead *weft.Agent) (sess *weft.Session, runID string, it weft.SubrunItem) {
	t.Helper()
	sess, res := runSettled(t, lead, "ship it")
	if len(res.Subruns) != 1 {
		t.Fatalf("parent %s with %d sub-run items", res.Status, len(res.Subruns))
	}
	return sess, res.RunID, res.Subruns[0]
}

// twoDelegations calls the scout and the deployer in one response, then
// joins their returns.
func twoDelegations() llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if rets := last.ToolReturns(); len(rets) > 0 {
			var parts []string
			for _, r := range rets {
				parts = append(parts, string(r.Content))
			}
			return &llm.Response{Text: strings.Join(parts, " + ")}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{
			{ID: "s1", Name: "scout", Arguments: []byte(`{"prompt":"look"}`)},
			{ID: "d1", Name: "deployer", Arguments: []byte(`{"prompt":"prod"}`)},
		}}, nil
	})
}

func init() {
	childModes["subrun-start"] = subrunChild
	childModes["subrun-approve"] = subrunChild
}

// subrunChild is the child process of TestAgentToolKilledMidWait.
func subrunChild(mode string) error {
	ctx := context.Background()
	rt, err := weft.Start(ctx, weft.Config{DataDir: os.Getenv(envDir), Sync: bus.SyncAlways})
	if err != nil {
		return err
	}
	defer rt.Close()
	lead, deployer, err := subrunAgents(rt, true)
	if err != nil {
		return err
	}
	if _, err := rt.Recover(ctx); err != nil {
		return err
	}
	sess := lead.Session(os.Getenv(envSession))
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch mode {
	case "subrun-start":
		res, err := sess.Run(ctx, "ship it")
		if err != nil {
			return err
		}
		if res, err = sess.Settle(wctx, res.RunID); err != nil {
			return err
		}
		fmt.Println("WAITING", res.Status, len(res.Subruns))
		select {} // wait to be killed
	case "subrun-approve":
		st, err := sess.Status(ctx)
		if err != nil {
			return err
		}
		runID := st.Runs[len(st.Runs)-1].ID
		res, err := sess.Settle(wctx, runID)
		if err != nil {
			return err
		}
		if len(res.Subruns) != 1 {
			return fmt.Errorf("after the restart the parent is %s with %d sub-run items", res.Status, len(res.Subruns))
		}
		it := res.Subruns[0]
		if _, err := deployer.Session(it.SessionID).Decide(ctx, weft.Approve(it.ID, "ops", nil)); err != nil {
			return err
		}
		res, err = sess.Settle(wctx, runID)
		if err != nil {
			return err
		}
		fmt.Println("RESULT", res.Status, res.Output)
	}
	return nil
}

// TestAgentToolKilledMidWait: a parent with two parallel children, one of
// which waits for an approval, is killed (SIGKILL) while it waits; in a
// new process the approval resumes the child, whose end resumes the
// parent, which completes with both children's outputs.
func TestAgentToolKilledMidWait(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir, session := t.TempDir(), "subrun-killed"
	cmd, out := startChild(t, "subrun-start", dir, session, "")
	if line := readLine(t, out, "WAITING"); line != "WAITING waiting 1" {
		t.Fatalf("child: %s", line)
	}
	kill(t, cmd)
	cmd, out = startChild(t, "subrun-approve", dir, session, "")
	if line := readLine(t, out, "RESULT"); line != `RESULT completed "the coast is clear" + "deployed prod"` {
		t.Fatalf("child: %s", line)
	}
	_ = cmd.Wait()
	evs := checkLog(t, dir, session)
	var resolved int
	for _, ev := range evs {
		if ev.Type == events.TypeDeferredResolved {
			resolved++
		}
	}
	if resolved != 2 || evs[len(evs)-1].Type != events.TypeRunCompleted {
		t.Errorf("parent log %v: want two resolved sub-runs and run.completed", types(evs))
	}
}

// TestRecoverSettlesSubruns: a child that ended where nothing delivered
// its end (a runtime without agent tools) is delivered by the next
// Recover, a damaged running session elsewhere in the log (whose fold
// refuses an event) notwithstanding, which Recover still reports; a child
// whose parent was cancelled where nothing cancelled it is cancelled by
// Recover (an orphan).
func TestRecoverSettlesSubruns(t *testing.T) {
	for _, tc := range []struct {
		name            string
		orphan, damaged bool
	}{
		{name: "settle"},
		{name: "orphan", orphan: true},
		{name: "damaged", damaged: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orphan := tc.orphan
			store := memstore.New()
			t.Cleanup(func() { store.Close() })
			start := func(agentTools bool, want error) (*weft.Runtime, *weft.Agent, *weft.Agent) {
				rt := startOn(t, store)
				lead, deployer, err := subrunAgents(rt, agentTools)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := rt.Recover(t.Context()); !errors.Is(err, want) {
					t.Fatalf("Recover: %v, want %v", err, want)
				}
				return rt, lead, deployer
			}
			rt1, lead, _ := start(true, nil)
			sess, runID, it := waitingForSubrun(t, lead)
			rt1.Close()

			rt2, lead, deployer := start(false, nil)
			if orphan {
				if err := lead.Session(sess.ID()).Cancel(t.Context(), runID, "bob", "stop"); err != nil {
					t.Fatal(err)
				}
			} else {
				if _, err := deployer.Session(it.SessionID).Decide(t.Context(), weft.Approve(it.ID, "ops", nil)); err != nil {
					t.Fatal(err)
				}
				if cres := settle(t, deployer.Session(it.SessionID), it.RunID); cres.Status != weft.StatusCompleted {
					t.Fatalf("child %s", cres.Status)
				}
			}
			time.Sleep(50 * time.Millisecond)
			if st, err := lead.Session(sess.ID()).Status(t.Context()); err != nil || (!orphan && st.Runs[len(st.Runs)-1].Status != weft.StatusWaiting) {
				t.Fatalf("the end was delivered without agent tools: %+v, %v", st, err)
			}
			rt2.Close()

			var want error
			if tc.damaged {
				// A running session whose fold refuses an event: damaged.
				bad := []events.Event{
					events.MustNew(events.TypeRunStarted, events.RunStarted{Agent: "lead", Input: []byte(`"hi"`)}, events.WithSession("bad"), events.WithRun("r1")),
					events.MustNew(events.TypeRunResumed, events.RunResumed{}, events.WithSession("bad"), events.WithRun("r9")),
				}
				if _, err := store.Append(t.Context(), events.SessionStream("bad"), events.NoStream, bad...); err != nil {
					t.Fatal(err)
				}
				want = weft.ErrSessionDamaged
			}
			_, lead, deployer = start(true, want)
			if orphan {
				cres := settle(t, deployer.Session(it.SessionID), it.RunID)
				if cres.Status != weft.StatusCancelled {
					t.Fatalf("orphan child %s, want cancelled", cres.Status)
				}
				return
			}
			res := settle(t, lead.Session(sess.ID()), runID)
			if res.Status != weft.StatusCompleted || res.Output != `"the coast is clear" + "deployed prod"` {
				t.Fatalf("parent %s %q", res.Status, res.Output)
			}
		})
	}
}
