package weft_test

import (
	"context"
	"strings"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

func TestPromptPlaceholders(t *testing.T) {
	rt := newRuntime(t)
	status, err := toolsets.NewFunc("status", func(context.Context, struct {
		Service string `json:"service" jsonschema:"The service to check."`
	}) (string, error) {
		return "green", nil
	}, toolsets.WithDescription("Report a service's status. Cheap."))
	if err != nil {
		t.Fatal(err)
	}
	hidden := tool(t, "load_adapter", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "", nil }, toolsets.WithVisibility(toolsets.Hidden))
	model := llm.NewScripted(llm.ScriptText("ok"))
	a := newAgent(t, rt, weft.AgentConfig{Model: model, Tools: []toolsets.Tool{status, hidden},
		Instructions: []string{"Tools:\n{brief_tools}\n\n{detailed_tools}\nVariables: {shared_var_names}"}})
	if _, err := a.NewSession().Run(t.Context(), "go"); err != nil {
		t.Fatal(err)
	}
	got := model.Requests()[0].Instructions
	want := "Tools:\n- status: Report a service's status.\n\nfunc status(service string)\n    // Report a service's status. Cheap.\n    //   service: The service to check.\nVariables: (none yet)"
	if got != want {
		t.Fatalf("instructions:\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "load_adapter") {
		t.Fatal("a hidden tool is listed")
	}
}

func TestPromptPlaceholdersUndocumented(t *testing.T) {
	rt := newRuntime(t)
	ping := tool(t, "ping", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) { return "", nil })
	a := newAgent(t, rt, weft.AgentConfig{Model: llm.NewScripted(llm.ScriptText("ok")), Tools: []toolsets.Tool{ping},
		Instructions: []string{"{detailed_tools}"}})
	_, err := a.NewSession().Run(t.Context(), "go")
	if err == nil || !strings.Contains(err.Error(), "toolset_error") || !strings.Contains(err.Error(), `tool "ping" has no description`) {
		t.Fatalf("err = %v; want the run failed naming the undocumented tool", err)
	}
}
