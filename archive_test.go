package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// Point 9: a session archive records the toolset ids it requires, survives
// JSON, restores into another runtime's agent (which must have those ids),
// and the restored waiting run resumes under the current agent.
func TestSessionArchiveRestore(t *testing.T) {
	lib := func(t *testing.T) *toolsets.Library {
		return library(t, staticToolset(t, "files", okTool(t, "read_file", nil)))
	}
	var runs1, runs2 atomic.Int32
	rt1 := newRuntime(t)
	s1, _ := toolsets.NewSearch(lib(t), 5)
	m1 := llm.NewScripted(
		llm.ScriptToolCalls(call("s1", toolsets.SearchToolName, `{"query":"read"}`)),
		llm.ScriptToolCalls(call("d1", "deploy", `{}`)))
	a1, err := rt1.NewAgent("ops", weft.AgentConfig{Model: m1, Tools: []toolsets.Tool{deployTool(t, &runs1)},
		Toolsets: []toolsets.Toolset{s1, staticToolset(t, "workspace", okTool(t, "lookup", nil))}})
	if err != nil {
		t.Fatal(err)
	}
	sess := a1.NewSession()
	waiting, err := sess.Run(t.Context(), "deploy")
	if err != nil || waiting.Status != weft.StatusWaiting {
		t.Fatalf("run = %+v, %v", waiting, err)
	}
	ar, err := sess.Export(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(ar)
	if err != nil {
		t.Fatal(err)
	}
	var back weft.SessionArchive
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.RequiredToolsetIDs, []string{"tool_search", "workspace"}) {
		t.Errorf("required ids = %v", back.RequiredToolsetIDs)
	}
	if got, _ := toolsets.SearchStateFrom(back.State); !slices.Contains(got.LoadedTools, "read_file") {
		t.Errorf("archived search state = %+v", back.State)
	}

	rt2 := startOn(t, memstore.New())
	t.Run("missing toolset", func(t *testing.T) {
		a, err := rt2.NewAgent("lacking", weft.AgentConfig{Model: llm.AlwaysText("x"), Toolsets: []toolsets.Toolset{staticToolset(t, "workspace", okTool(t, "lookup", nil))}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.RestoreSession(t.Context(), &back)
		if !errors.Is(err, weft.ErrMissingToolset) || !strings.Contains(err.Error(), `"tool_search"`) {
			t.Fatalf("err = %v, want ErrMissingToolset naming tool_search", err)
		}
	})
	s2, _ := toolsets.NewSearch(lib(t), 5)
	m2 := llm.NewScripted(llm.ScriptText("deployed"))
	// The current agent requires approval by policy for lookup only; the
	// deploy tool asks for approval itself.
	a2, err := rt2.NewAgent("ops2", weft.AgentConfig{Model: m2, Tools: []toolsets.Tool{deployTool(t, &runs2)},
		Toolsets: []toolsets.Toolset{s2, staticToolset(t, "workspace", okTool(t, "lookup", nil))}, ApprovalRequiredTools: []string{"lookup"}})
	if err != nil {
		t.Fatal(err)
	}
	restored, err := a2.RestoreSession(t.Context(), &back)
	if err != nil {
		t.Fatal(err)
	}
	res, err := restored.Resume(t.Context(), weft.Approve("d1", "ui", nil))
	if err != nil || res.Status != weft.StatusCompleted || res.Output != "deployed" {
		t.Fatalf("resume = %+v, %v", res, err)
	}
	if runs1.Load() != 0 || runs2.Load() != 1 {
		t.Errorf("deploy ran %d times in the old runtime, %d in the new; want 0 and 1", runs1.Load(), runs2.Load())
	}
	if got := toolNames(m2.Requests()[0]); !slices.Contains(got, "read_file") {
		t.Errorf("restored tools = %v, want read_file from the search state", got)
	}
	// Restoring again onto the same log is a no-op.
	if _, err := a2.RestoreSession(t.Context(), &back); !errors.Is(err, weft.ErrSessionExists) {
		t.Errorf("second restore err = %v, want ErrSessionExists (the session has moved on)", err)
	}
}

func TestToolsetIDValidation(t *testing.T) {
	var noID toolsets.Toolset = anonToolset{}
	blank, _ := toolsets.New("blank", nil, toolsets.WithID("  "))
	implicit, _ := toolsets.New("named", nil)
	tests := []struct {
		name     string
		strict   bool
		tss      []toolsets.Toolset
		wantErr  toolsets.IDProblem
		wantWarn toolsets.IDProblem
	}{
		{name: "duplicate id", tss: []toolsets.Toolset{staticToolset(t, "a", okTool(t, "x", nil)), staticToolset(t, "a", okTool(t, "y", nil))}, wantErr: toolsets.ProblemDuplicateID},
		{name: "empty id", tss: []toolsets.Toolset{blank}, wantErr: toolsets.ProblemEmptyID},
		{name: "strict missing id", strict: true, tss: []toolsets.Toolset{noID}, wantErr: toolsets.ProblemMissingID},
		{name: "lenient missing id", tss: []toolsets.Toolset{noID}, wantWarn: toolsets.ProblemMissingID},
		// Built without WithID: the name stands in, but it is no durable id.
		{name: "strict implicit id", strict: true, tss: []toolsets.Toolset{implicit}, wantErr: toolsets.ProblemMissingID},
		{name: "lenient implicit id", tss: []toolsets.Toolset{implicit}, wantWarn: toolsets.ProblemMissingID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t)
			a, err := rt.NewAgent("a", weft.AgentConfig{Model: llm.AlwaysText("x"), Toolsets: tt.tss, StrictToolsetIDs: tt.strict})
			if tt.wantErr != "" {
				if !errors.Is(err, toolsets.ErrToolsetID) || !strings.Contains(err.Error(), string(tt.wantErr)) {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w := a.ToolsetIDs().Warnings; len(w) != 1 || w[0].Problem != tt.wantWarn {
				t.Errorf("warnings = %+v, want %s", w, tt.wantWarn)
			}
		})
	}
}

// One toolset attached under two prefixes has two identities, so a
// strict agent accepts it and its archive requires both.
func TestToolsetTwiceUnderTwoPrefixes(t *testing.T) {
	rt := newRuntime(t)
	ws := staticToolset(t, "workspace", okTool(t, "read_file", nil))
	a, err := toolsets.Prefixed(ws, "ws")
	if err != nil {
		t.Fatal(err)
	}
	b, err := toolsets.Prefixed(ws, "ro")
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewScripted(llm.ScriptToolCalls(call("1", "ws_read_file", `{}`), call("2", "ro_read_file", `{}`)), llm.ScriptText("ok"))
	agent, err := rt.NewAgent("twice", weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{a, b}, StrictToolsetIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ws_workspace", "ro_workspace"}, agent.ToolsetIDList()); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if res, err := agent.Run(t.Context(), "go"); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

// anonToolset declares no id.
type anonToolset struct{}

func (anonToolset) Info() toolsets.ToolsetInfo { return toolsets.ToolsetInfo{Name: "anon"} }
func (anonToolset) Prepare(context.Context, *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	return toolsets.Preparation{}, nil
}
