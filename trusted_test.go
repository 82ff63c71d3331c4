package weft_test

import (
	"context"
	"errors"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// gatedWrites is a toolset whose write tool asks for approval itself (as
// the environment toolsets and destructive MCP tools do), recording who
// approved each call that ran.
func gatedWrites(t *testing.T, approvedBy *[]string) toolsets.Toolset {
	t.Helper()
	write := tool(t, "write", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
		by := ""
		if tc.Approval != nil {
			by = tc.Approval.DecidedBy
		}
		*approvedBy = append(*approvedBy, by)
		return "written", nil
	})
	ts, err := toolsets.New("files", []toolsets.Tool{write})
	if err != nil {
		t.Fatal(err)
	}
	gated, err := toolsets.RequireApproval(ts, []string{"write"}, "writes need a person")
	if err != nil {
		t.Fatal(err)
	}
	return gated
}

// An agent may opt out of the approval gate a toolset brings (its
// TrustedTools), never out of its own policy; a trusted entry that matches
// nothing is refused.
func TestTrustedToolsOptOutOfToolsetGates(t *testing.T) {
	for _, tc := range []struct {
		name            string
		trusted, policy []string
		wantWaiting     bool
	}{
		{name: "the toolset's gate holds by default", wantWaiting: true},
		{name: "a trusted tool runs without a person", trusted: []string{"write"}},
		{name: "trust by toolset name", trusted: []string{"files"}},
		{name: "the agent's own policy is never loosened", trusted: []string{"write"}, policy: []string{"write"}, wantWaiting: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t)
			var approvedBy []string
			model := llm.NewScripted(llm.ScriptToolCalls(call("w1", "write", `{}`)), llm.ScriptText("done"))
			a := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{gatedWrites(t, &approvedBy)},
				TrustedTools: tc.trusted, ApprovalRequiredTools: tc.policy})
			res, err := a.NewSession().Run(t.Context(), "write it")
			if err != nil {
				t.Fatal(err)
			}
			if waiting := res.Status == weft.StatusWaiting; waiting != tc.wantWaiting {
				t.Fatalf("status %s, want waiting=%v", res.Status, tc.wantWaiting)
			}
			if tc.wantWaiting {
				if len(approvedBy) != 0 {
					t.Errorf("the tool ran before its approval: %q", approvedBy)
				}
				return
			}
			if len(approvedBy) != 1 || approvedBy[0] == "" {
				t.Errorf("approvals the tool ran with %q, want one decided by the agent's policy", approvedBy)
			}
		})
	}
	rt := newRuntime(t)
	var none []string
	_, err := rt.NewAgent("typo", weft.AgentConfig{Model: llm.AlwaysText("x"), Toolsets: []toolsets.Toolset{gatedWrites(t, &none)}, TrustedTools: []string{"wirte"}})
	if !errors.Is(err, toolsets.ErrUnmatchedSelector) {
		t.Errorf("a trusted entry that matches nothing: NewAgent = %v, want ErrUnmatchedSelector", err)
	}
}
