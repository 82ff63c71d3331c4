package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

func TestTools(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"tools"}, &stdout, &stderr); err != nil {
		t.Fatalf("tools: %v\n%s", err, stderr.String())
	}
	var kinds []toolsets.Kind
	for line := range strings.SplitSeq(stdout.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var ret toolsets.Return
		if err := json.Unmarshal([]byte(line), &ret); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		kinds = append(kinds, ret.Kind)
	}
	want := []toolsets.Kind{
		"success", "success", "success", "invalid_arguments", "success", "approval_required", "success", "approval_required",
		"success", "success", "success", "feedback", "success", "success", "success", "not_found", "not_exposed", "success",
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	out := stdout.String()
	for _, s := range []string{`"total":5`, `"summary":"release is ready"`, `"run_id":"tools_run"`, `"attempts":3`, "## functions",
		"- delete_file(path: string) [approval required]: Delete a file.",
		"# tools that need a person:\n- delete_file: approval required (deleting needs a person)\n#"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %s", s)
		}
	}
	if strings.Contains(out[:strings.Index(out, "# instructions")], "load_calendar_adapter") {
		t.Error("the hidden tool is described to the model")
	}
}
