package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/mcp"
)

func newLive(t *testing.T, c mcp.Config) *mcp.Toolset {
	t.Helper()
	ts, err := mcp.New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ts.Close() })
	return ts
}

func TestLiveListing(t *testing.T) {
	c, _ := goServer(t, "gs")
	c.ToolPrefix = "gs"
	c.IncludeInstructions = true
	h := start(t, newLive(t, c))
	h.mustReady()
	if h.Report.State != toolsets.StateInitialized {
		t.Fatalf("report = %+v", h.Report)
	}
	want := []string{"gs_add_tool", "gs_ask", "gs_danger", "gs_echo", "gs_fail", "gs_hang", "gs_progress", "gs_put", "gs_slow", "gs_write"}
	got := h.names()
	slices.Sort(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	echo := h.def("gs_echo")
	if echo.Metadata[mcp.MetaServer] != "gs" || echo.Metadata[mcp.MetaTool] != "echo" || echo.Metadata[mcp.MetaTransport] != "stdio" {
		t.Errorf("echo metadata = %v", echo.Metadata)
	}
	if !strings.Contains(string(echo.Parameters), `"text"`) {
		t.Errorf("echo schema = %s", echo.Parameters)
	}
	if d := cmp.Diff([]toolsets.Instruction{{Group: "mcp:gs", Text: serverInstructions}}, h.Prep.Instructions); d != "" {
		t.Errorf("instructions (-want +got):\n%s", d)
	}
	if r := h.call(t.Context(), "c1", "gs_echo", `{"text":"hi"}`, false); r.Kind != toolsets.KindSuccess || content(r) != "hi" {
		t.Errorf("echo = %+v", r)
	}
}

// Annotations drive policy: readOnlyHint makes a tool concurrency-safe,
// an unset destructiveHint makes it approval-required, and declarations
// only tighten.
func TestLiveAnnotationsPolicy(t *testing.T) {
	tests := []struct {
		name           string
		cfg            func(*mcp.Config)
		tool           string
		concurrent     bool
		approval       bool
		wantSequential bool
	}{
		{name: "readOnly is concurrency-safe", tool: "echo", concurrent: true},
		{name: "destructive unset needs approval", tool: "danger", approval: true},
		{name: "destructive false, not readOnly", tool: "write"},
		{name: "opt out of destructive approval", tool: "danger", cfg: func(c *mcp.Config) { c.TrustDestructive = true }},
		{name: "declared sequential wins over readOnly", tool: "echo", wantSequential: true,
			cfg: func(c *mcp.Config) { c.Tools = []mcp.ToolSpec{{Name: "echo", Sequential: true}} }},
		{name: "declared not-readOnly tightens", tool: "echo", approval: true,
			cfg: func(c *mcp.Config) {
				c.Tools = []mcp.ToolSpec{{Name: "echo", Annotations: &mcp.Annotations{ReadOnly: mcp.Hint(false)}}}
			}},
		{name: "declared approval is not loosened by destructive false", tool: "write", approval: true,
			cfg: func(c *mcp.Config) { c.Tools = []mcp.ToolSpec{{Name: "write", ApprovalRequired: true}} }},
		{name: "declared destructive false does not loosen the server's default", tool: "danger", approval: true,
			cfg: func(c *mcp.Config) {
				c.Tools = []mcp.ToolSpec{{Name: "danger", Annotations: &mcp.Annotations{Destructive: mcp.Hint(false)}}}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := goServer(t, "gs")
			if tt.cfg != nil {
				tt.cfg(&c)
			}
			h := start(t, newLive(t, c))
			h.mustReady()
			d := h.def(tt.tool)
			g := toolsets.GatingOf(d)
			if d.ConcurrentSafe != tt.concurrent || g.Approval != tt.approval || d.Sequential != tt.wantSequential {
				t.Errorf("%s: concurrent %v approval %v sequential %v, want %v %v %v", tt.tool, d.ConcurrentSafe, g.Approval, d.Sequential, tt.concurrent, tt.approval, tt.wantSequential)
			}
		})
	}
}

func TestLiveApprovalGatesTheCall(t *testing.T) {
	c, log := goServer(t, "gs")
	h := start(t, newLive(t, c))
	h.mustReady()
	r := h.call(t.Context(), "d1", "danger", `{}`, false)
	if r.Kind != toolsets.KindApprovalRequired {
		t.Fatalf("danger without approval = %+v", r)
	}
	if slices.Contains(serverLog(t, log), "call_danger") {
		t.Fatal("the call reached the server before approval")
	}
	if r := h.call(t.Context(), "d1", "danger", `{}`, true); r.Kind != toolsets.KindSuccess || content(r) != "boom" {
		t.Fatalf("approved danger = %+v", r)
	}
}

func TestLiveResults(t *testing.T) {
	c, _ := goServer(t, "gs")
	c.Tools = []mcp.ToolSpec{{Name: "nosuch", Annotations: &mcp.Annotations{ReadOnly: mcp.Hint(true)}}, {Name: "echo"}}
	tests := []struct {
		name, tool, args string
		useDeclared      bool
		kind             toolsets.Kind
		contains         string
		attempts         int
	}{
		{name: "isError is a failed result, not retried", tool: "fail", args: `{}`, kind: toolsets.KindExecution, contains: "the disk is full", attempts: 1},
		{name: "arguments the schema refuses", tool: "echo", args: `{"text":5}`, kind: toolsets.KindInvalidArguments},
		{name: "an input request (elicitation) asks a person", tool: "ask", args: `{}`, kind: toolsets.KindElicitationRequired,
			contains: "Which environment?", attempts: 1},
		{name: "a tool the server does not know", tool: "nosuch", args: `{}`, useDeclared: true, kind: toolsets.KindInvalidArguments, contains: "nosuch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := c
			cfg.UseDeclaredTools = tt.useDeclared
			h := start(t, newLive(t, cfg))
			h.mustReady()
			r := h.call(t.Context(), "c", tt.tool, tt.args, false)
			if r.Kind != tt.kind || !strings.Contains(content(r), tt.contains) {
				t.Errorf("return = %s %s", r.Kind, r.Content)
			}
			if tt.attempts > 0 && r.Attempts != tt.attempts {
				t.Errorf("attempts = %d, want %d", r.Attempts, tt.attempts)
			}
		})
	}
}

// A server's elicitation becomes weft's ElicitationRequired (message,
// schema, the server's request state kept with it); the call sent again
// with a person's answer carries the input response and the state, and
// the server answers.
func TestLiveElicitationAnswered(t *testing.T) {
	c, _ := goServer(t, "gs")
	h := start(t, newLive(t, c))
	h.mustReady()
	r := h.call(t.Context(), "e1", "ask", `{}`, false)
	if r.Kind != toolsets.KindElicitationRequired || r.Control == nil || r.Control.Reason != "Which environment?" {
		t.Fatalf("ask = %+v", r)
	}
	meta := r.Control.Metadata
	schema, _ := json.Marshal(meta[toolsets.MetaElicitationSchema])
	if !strings.Contains(string(schema), `"env"`) || meta["mcp_request_state"] != "state-7" {
		t.Fatalf("elicitation metadata %v", meta)
	}
	req := toolsets.ElicitRequest{Message: r.Control.Reason, Schema: schema, Metadata: meta}
	for action, want := range map[string]string{toolsets.ElicitAccept: "deploying to staging", toolsets.ElicitDecline: "not deployed: decline"} {
		el := &toolsets.Elicitation{Action: action, Request: req}
		if action == toolsets.ElicitAccept {
			el.Content = json.RawMessage(`{"env":"staging"}`)
		}
		got := h.reg.Call(t.Context(), toolsets.Invocation{CallID: "e1", Name: "ask", Arguments: json.RawMessage(`{}`), RunID: h.tc.RunID, SessionID: h.tc.SessionID, Elicitation: el})
		if got.Kind != toolsets.KindSuccess || content(got) != want {
			t.Errorf("%s: ask again = %s %s, want %q", action, got.Kind, got.Content, want)
		}
	}
}

func TestLiveProgress(t *testing.T) {
	c, _ := goServer(t, "gs")
	h := start(t, newLive(t, c))
	h.mustReady()
	if r := h.call(t.Context(), "p1", "progress", `{}`, false); r.Kind != toolsets.KindSuccess {
		t.Fatalf("progress = %+v", r)
	}
	var got []mcp.ProgressData
	for _, p := range h.progressOf("p1") {
		if p.Name != mcp.ProgressName {
			t.Errorf("progress name %q", p.Name)
		}
		var d mcp.ProgressData
		if err := json.Unmarshal(p.Data, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	want := []mcp.ProgressData{{Progress: 1, Total: 3, Message: "step 1"}, {Progress: 2, Total: 3, Message: "step 2"}, {Progress: 3, Total: 3, Message: "step 3"}}
	if len(got) == 0 || len(got) > len(want) {
		t.Fatalf("progress = %v", got)
	}
	if d := cmp.Diff(want[:len(got)], got); d != "" {
		t.Errorf("progress (-want +got):\n%s", d)
	}
}

// Cancelling a call's context cancels it at the server: the SDK sends
// notifications/cancelled, and the server's handler sees its ctx end.
func TestLiveCancellation(t *testing.T) {
	c, log := goServer(t, "gs")
	h := start(t, newLive(t, c))
	h.mustReady()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan toolsets.Return, 1)
	go func() { done <- h.call(ctx, "s1", "slow", `{}`, false) }()
	eventually(t, "the server to start the call", func() bool { return slices.Contains(serverLog(t, log), "call_slow") })
	cancel()
	if r := <-done; r.Kind != toolsets.KindCancelled {
		t.Fatalf("slow = %+v", r)
	}
	eventually(t, "the server to see the cancellation", func() bool { return slices.Contains(serverLog(t, log), "cancelled_slow") })
}

// A tool that never answers fails with the tool's timeout; the session
// stays usable, and the calls beside it are not cancelled.
func TestLiveDeadlineAndSiblings(t *testing.T) {
	c, _ := goServer(t, "gs")
	c.Tools = []mcp.ToolSpec{{Name: "hang", Timeout: 300 * time.Millisecond}}
	h := start(t, newLive(t, c))
	h.mustReady()
	calls := []struct{ id, tool, args string }{{"h", "hang", `{}`}, {"f", "fail", `{}`}, {"e", "echo", `{"text":"alive"}`}, {"p", "progress", `{}`}}
	got := make([]toolsets.Return, len(calls))
	var wg sync.WaitGroup
	for i, cl := range calls {
		wg.Go(func() { got[i] = h.call(t.Context(), cl.id, cl.tool, cl.args, false) })
	}
	wg.Wait()
	kinds := map[string]toolsets.Kind{}
	for i, r := range got {
		kinds[calls[i].id] = r.Kind
	}
	want := map[string]toolsets.Kind{"h": toolsets.KindTimeout, "f": toolsets.KindExecution, "e": toolsets.KindSuccess, "p": toolsets.KindSuccess}
	if d := cmp.Diff(want, kinds); d != "" {
		t.Errorf("kinds (-want +got):\n%s", d)
	}
	if r := h.call(t.Context(), "e2", "echo", `{"text":"still"}`, false); content(r) != "still" {
		t.Errorf("echo after the timeout = %+v", r)
	}
}

// A server killed in the middle of a call: a call that is not annotated
// idempotent or read-only is not sent again, and says it may or may not
// have run; an idempotent one is sent again on a new session. Both
// reconnect, and the tools are listed again.
func TestLiveServerDiesMidCall(t *testing.T) {
	tests := []struct {
		tool      string
		wantCalls int
		kind      toolsets.Kind
		contains  string
	}{
		{tool: "write", wantCalls: 1, kind: toolsets.KindExecution, contains: "may or may not have run"},
		{tool: "put", wantCalls: 2, kind: toolsets.KindSuccess, contains: "put done"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			c, log := goServer(t, "gs")
			h := start(t, newLive(t, c))
			h.mustReady()
			r := h.call(t.Context(), "w", tt.tool, `{"die":true}`, false)
			if r.Kind != tt.kind || !strings.Contains(content(r), tt.contains) {
				t.Fatalf("%s = %s %s", tt.tool, r.Kind, r.Content)
			}
			n := 0
			for _, l := range serverLog(t, log) {
				if l == "call_"+tt.tool {
					n++
				}
			}
			if n != tt.wantCalls {
				t.Errorf("the server got %d calls of %s, want %d", n, tt.tool, tt.wantCalls)
			}
			if r := h.call(t.Context(), "e", "echo", `{"text":"back"}`, false); content(r) != "back" {
				t.Errorf("echo after reconnecting = %+v", r)
			}
			h.step()
			h.mustReady()
			if h.Report.State != toolsets.StateRefreshed || !slices.Contains(h.names(), "reborn") {
				t.Errorf("refresh after reconnecting = %+v, tools %v", h.Report, h.names())
			}
		})
	}
}

// A change of the tool list (the server's list_changed notification) is
// picked up at the next step, and changes the digest.
func TestLiveToolListChange(t *testing.T) {
	c, _ := goServer(t, "gs")
	ts := newLive(t, c)
	h := start(t, ts)
	h.mustReady()
	before := ts.Digest("run-" + t.Name())
	if !strings.HasPrefix(before, "sha256:") {
		t.Fatalf("digest = %q", before)
	}
	if r := h.call(t.Context(), "a", "add_tool", `{}`, false); r.Kind != toolsets.KindSuccess {
		t.Fatalf("add_tool = %+v", r)
	}
	eventually(t, "the new tool", func() bool {
		h.step()
		return slices.Contains(h.names(), "extra")
	})
	if h.Report.State != toolsets.StateRefreshed || h.Report.ToolCount != 11 {
		t.Errorf("report = %+v", h.Report)
	}
	if after := ts.Digest("run-" + t.Name()); after == before || !strings.HasPrefix(after, "sha256:") {
		t.Errorf("digest %q did not change (was %q)", after, before)
	}
}

// A call without any timeout still has a deadline: CallTimeout.
func TestLiveCallTimeoutWhenNoneIsSet(t *testing.T) {
	c, _ := goServer(t, "gs")
	c.CallTimeout = 300 * time.Millisecond
	h := startRun(t, newLive(t, c), "run-"+t.Name()) // no registry default timeout
	h.mustReady()
	r := h.call(t.Context(), "h", "hang", `{}`, false)
	if r.Kind != toolsets.KindTimeout || !strings.Contains(content(r), "CallTimeout") {
		t.Errorf("hang = %s %s", r.Kind, r.Content)
	}
}

// Per run, each run has its own server process, closed when the run
// exits; Shared, the runs share one, closed by Close.
func TestLiveSessionScope(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "per run", true: "shared"}[shared], func(t *testing.T) {
			c, _ := goServer(t, "gs")
			c.Shared = shared
			ts := newLive(t, c)
			a := startRun(t, ts, "a", toolsets.WithDefaultTimeout(20*time.Second))
			b := startRun(t, ts, "b", toolsets.WithDefaultTimeout(20*time.Second))
			a.mustReady()
			b.mustReady()
			pa, pb := mcp.ServerPID(ts, "a"), mcp.ServerPID(ts, "b")
			if pa == 0 || (pa == pb) != shared {
				t.Fatalf("pids %d %d, shared %v", pa, pb, shared)
			}
			if _, err := a.lc.Exit(t.Context(), a.tc); err != nil {
				t.Fatal(err)
			}
			alive := syscall.Kill(pa, 0) == nil
			if alive != shared {
				t.Errorf("after run a exited, its server is alive: %v (shared %v)", alive, shared)
			}
			if r := b.call(t.Context(), "e", "echo", `{"text":"b"}`, false); content(r) != "b" {
				t.Errorf("run b's echo = %+v", r)
			}
			if err := ts.Close(); err != nil {
				t.Fatal(err)
			}
			if syscall.Kill(pb, 0) == nil {
				t.Error("Close left the server running")
			}
		})
	}
}
