package weft_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

func library(t *testing.T, tss ...toolsets.Toolset) *toolsets.Library {
	t.Helper()
	lib, err := toolsets.NewLibrary(t.Context(), tss...)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func typesOf(evs []events.Event, prefix string) []events.Type {
	var out []events.Type
	for _, e := range evs {
		if strings.HasPrefix(string(e.Type), prefix) {
			out = append(out, e.Type)
		}
	}
	return out
}

// Point 6: the model searches, the matching tools load for the next turn,
// tool_search.* events are recorded, and the loaded state is session state.
func TestToolSearchInARun(t *testing.T) {
	rt := newRuntime(t)
	var reads atomic.Int32
	lib := library(t, staticToolset(t, "files", okTool(t, "read_file", &reads), okTool(t, "delete_file", nil)), staticToolset(t, "mail", okTool(t, "send_mail", nil)))
	search, err := toolsets.NewSearch(lib, 5)
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("s0", toolsets.SearchToolName, `{"query":"  "}`)),
		llm.ScriptToolCalls(call("s1", toolsets.SearchToolName, `{"query":"zebra"}`)),
		llm.ScriptToolCalls(call("s2", toolsets.SearchToolName, `{"query":"read file"}`)),
		llm.ScriptToolCalls(call("r1", "read_file", `{}`)),
		llm.ScriptText("read it"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{search}})
	sess := a.NewSession()
	res, err := sess.Run(t.Context(), "read a file")
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("run = %+v, %v", res, err)
	}
	reqs := model.Requests()
	if got := toolNames(reqs[2]); slices.Contains(got, "read_file") {
		t.Errorf("read_file offered before the search: %v", got)
	}
	if got := toolNames(reqs[3]); !slices.Contains(got, "read_file") || slices.Contains(got, "send_mail") {
		t.Errorf("tools after the search = %v, want read_file and not send_mail", got)
	}
	if reads.Load() != 1 {
		t.Errorf("read_file ran %d times", reads.Load())
	}
	want := []events.Type{events.TypeToolSearchInitialized, events.TypeToolSearchFailed, events.TypeToolSearchNoMatch, events.TypeToolSearchLoaded}
	if diff := cmp.Diff(want, typesOf(runEvents(t, sess, res.RunID), "tool_search.")); diff != "" {
		t.Errorf("tool_search events (-want +got):\n%s", diff)
	}
	st, err := sess.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	loaded := st.Loaded
	if !slices.Contains(loaded.LoadedTools, "read_file") || !slices.Contains(loaded.LoadedNamespaces, "files") {
		t.Errorf("session search state = %+v", loaded)
	}
	if got := loaded.Export()[toolsets.StateLoadedTools]; got == nil {
		t.Errorf("export lacks %s", toolsets.StateLoadedTools)
	}
}

// After a restart (a new runtime on the same log), the loaded tools are
// rebuilt from the tool_search.loaded events.
func TestToolSearchStateSurvivesRestart(t *testing.T) {
	store := newSharedStore()
	lib := func(t *testing.T) *toolsets.Library {
		return library(t, staticToolset(t, "files", okTool(t, "read_file", nil)), staticToolset(t, "mail", okTool(t, "send_mail", nil)))
	}
	rt1 := startOn(t, store)
	s1, _ := toolsets.NewSearch(lib(t), 5)
	m1 := llm.NewScripted(llm.ScriptToolCalls(call("s1", toolsets.SearchToolName, `{"query":"mail"}`)), llm.ScriptText("loaded"))
	a1, err := rt1.NewAgent("searcher", weft.AgentConfig{Model: m1, Toolsets: []toolsets.Toolset{s1}})
	if err != nil {
		t.Fatal(err)
	}
	sess := a1.NewSession()
	if _, err := sess.Run(t.Context(), "load mail"); err != nil {
		t.Fatal(err)
	}
	rt1.Close()

	rt2 := startOn(t, store)
	s2, _ := toolsets.NewSearch(lib(t), 5) // a fresh toolset: nothing loaded in memory
	m2 := llm.AlwaysText("hello")
	a2, err := rt2.NewAgent("searcher", weft.AgentConfig{Model: m2, Toolsets: []toolsets.Toolset{s2}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a2.Session(sess.ID()).Run(t.Context(), "send it"); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(m2.Requests()[0]); !slices.Contains(got, "send_mail") {
		t.Errorf("tools after restart = %v, want send_mail restored", got)
	}
}

// Point 7: a proxied tool is called through {prefix}_call_tool; an
// approval it raises suspends the run, and the approved call reaches it.
func TestToolProxyInARun(t *testing.T) {
	rt := newRuntime(t)
	var runs atomic.Int32
	lib := library(t, staticToolset(t, "ops", deployTool(t, &runs)), staticToolset(t, "files", okTool(t, "read_file", nil)))
	proxy, err := toolsets.NewProxy(lib, "ops", 5)
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(
		llm.ScriptToolCalls(call("s1", "ops_search_tool", `{"query":"deploy"}`)),
		llm.ScriptToolCalls(call("c1", "ops_call_tool", `{"name":"deploy","arguments":{}}`)),
		llm.ScriptText("deployed"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{proxy}})
	sess := a.NewSession()
	waiting, err := sess.Run(t.Context(), "deploy")
	if err != nil || waiting.Status != weft.StatusWaiting || len(waiting.Pending.Approvals) != 1 || waiting.Pending.Approvals[0].Tool != "ops_call_tool" {
		t.Fatalf("run = %+v, %v", waiting, err)
	}
	for _, req := range model.Requests() {
		if diff := cmp.Diff([]string{"ops_search_tool", "ops_call_tool"}, toolNames(req)); diff != "" {
			t.Errorf("offered tools (-want +got):\n%s", diff)
		}
	}
	res, err := sess.Resume(t.Context(), weft.Approve("c1", "ui", nil))
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("resume = %+v, %v", res, err)
	}
	if runs.Load() != 1 {
		t.Errorf("deploy ran %d times, want 1", runs.Load())
	}
	if got := lastUserMessage(t, model, 2).Parts[0].(llm.ToolReturn).ContentText(); !strings.Contains(got, `"approved":true`) {
		t.Errorf("proxied return = %s", got)
	}
}

// Point 8: a capability bundle's instructions, tools and settings reach
// the model request; its output validator rejects an output (the model
// gets a retry prompt); its run-start hook changes the run metadata that
// tools see.
func TestCapabilityBundle(t *testing.T) {
	rt := newRuntime(t)
	var seen atomic.Value
	audit := tool(t, "audit", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (any, error) {
		v, _ := tc.Metadata("audit_bundle")
		seen.Store(v)
		return "audited", nil
	})
	temp := 0.2
	bundle := weft.CapabilityBundle{
		Name:          "audit_bundle",
		Instructions:  []string{"Prefer concise audit notes."},
		Tools:         []toolsets.Tool{audit},
		ModelSettings: llm.Settings{Temperature: &temp},
		RequestParams: map[string]any{"reasoning_effort": "low"},
		OutputValidators: []weft.OutputValidator{func(_ context.Context, out string) error {
			if !strings.HasPrefix(out, "AUDIT:") {
				return toolsets.ModelRetry("start the answer with AUDIT:")
			}
			return nil
		}},
		OnRunStart: []weft.RunStartHook{func(_ context.Context, rs *weft.RunStart) error {
			rs.Metadata["audit_bundle"] = true
			return nil
		}},
	}
	model := llm.NewScripted(llm.ScriptToolCalls(call("a1", "audit", `{}`)), llm.ScriptText("done"), llm.ScriptText("AUDIT: done"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Capabilities: []weft.CapabilityBundle{bundle}})
	res, err := a.Run(t.Context(), "audit")
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "AUDIT: done" {
		t.Fatalf("run = %+v, %v", res, err)
	}
	req := model.Requests()[0]
	if !strings.Contains(req.Instructions, "Prefer concise audit notes.") || !slices.Contains(toolNames(req), "audit") ||
		req.Settings.Temperature == nil || *req.Settings.Temperature != 0.2 || string(req.Settings.Provider["reasoning_effort"]) != `"low"` {
		t.Errorf("request = instructions %q, tools %v, settings %+v", req.Instructions, toolNames(req), req.Settings)
	}
	if seen.Load() != true {
		t.Errorf("the tool saw audit_bundle = %v, want true", seen.Load())
	}
	rp, ok := lastUserMessage(t, model, 2).Parts[0].(llm.RetryPrompt)
	if !ok || rp.Message != "start the answer with AUDIT:" {
		t.Errorf("retry prompt = %+v", lastUserMessage(t, model, 2))
	}
}

func TestOutputValidatorBudgetAndHookError(t *testing.T) {
	rt := newRuntime(t)
	never := func(context.Context, string) error { return errors.New("never good") }
	a := newAgent(t, rt, weft.AgentConfig{Model: llm.AlwaysText("bad"), OutputValidators: []weft.OutputValidator{never}, OutputRetries: 1})
	_, err := a.Run(t.Context(), "go")
	var re *weft.RunError
	if !errors.As(err, &re) || re.Kind != "output_retry_limit_exceeded" {
		t.Fatalf("err = %v, want output_retry_limit_exceeded", err)
	}
	hookErr := errors.New("no budget")
	b, err := rt.NewAgent("hooked", weft.AgentConfig{Model: llm.AlwaysText("x"), OnRunStart: []weft.RunStartHook{func(context.Context, *weft.RunStart) error { return hookErr }}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Run(t.Context(), "go"); !errors.Is(err, hookErr) {
		t.Errorf("err = %v, want the hook's", err)
	}
}

func newSharedStore() events.Store { return memstore.New() }
