package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"demo"}, &stdout, &stderr); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
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
		"success", "success", "success", "invalid_arguments", "success", "approval_required", "success",
		"success", "success", "success", "feedback", "success", "success", "success", "not_found", "not_exposed", "success",
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	out := stdout.String()
	for _, s := range []string{`"total":5`, `"summary":"release is ready"`, `"run_id":"demo_run"`, `"attempts":3`, "## functions"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %s", s)
		}
	}
	if strings.Contains(out[:strings.Index(out, "# instructions")], "load_calendar_adapter") {
		t.Error("the hidden tool is described to the model")
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no command", nil},
		{"unknown command", []string{"launch"}},
		{"demo with arguments", []string{"demo", "extra"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(t.Context(), tt.args, &stdout, &stderr); !errors.Is(err, errUsage) {
				t.Errorf("err = %v, want a usage error", err)
			}
		})
	}
}
