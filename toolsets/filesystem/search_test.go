package filesystem_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/filesystem"
)

func TestGlob(t *testing.T) {
	h := bound(t, newVirtual(t))
	tests := []struct {
		pattern string
		want    []string
	}{
		{"*.md", []string{"README.md"}},
		{"src/*.go", []string{"src/main.go"}},
		{"**/*.go", []string{"src/lib/lib.go", "src/lib/x_test.go", "src/main.go"}},
		{"src/**", []string{"src/lib", "src/lib/lib.go", "src/lib/x_test.go", "src/main.go"}},
		{"**/*_test.go", []string{"src/lib/x_test.go"}},
		{"src/l?b/*.go", []string{"src/lib/lib.go", "src/lib/x_test.go"}},
		{"nothing/*", []string{}},
	}
	for _, tt := range tests {
		ret := h.call(filesystem.GlobTool, `{"pattern":"`+tt.pattern+`"}`, false)
		var got filesystem.GlobResult
		if err := json.Unmarshal(ret.Content, &got); err != nil || ret.Kind != toolsets.KindSuccess {
			if tt.pattern == "nothing/*" && ret.Kind == toolsets.KindFeedback {
				continue // the base directory does not exist
			}
			t.Fatalf("glob %q = %s %s", tt.pattern, ret.Kind, ret.Content)
		}
		if d := cmp.Diff(tt.want, got.Paths); d != "" {
			t.Errorf("glob %q (-want +got):\n%s", tt.pattern, d)
		}
	}
	if ret := h.call(filesystem.GlobTool, `{"pattern":"[a"}`, false); ret.Kind != toolsets.KindInvalidArguments {
		t.Errorf("bad pattern = %s", ret.Kind)
	}
}

func TestGrep(t *testing.T) {
	h := bound(t, newVirtual(t))
	tests := []struct {
		name string
		args string
		want filesystem.GrepResult
	}{
		{"everywhere", `{"pattern":"^package"}`, filesystem.GrepResult{Matches: []filesystem.Match{
			m("src/lib/lib.go", 1, "package lib"), m("src/lib/x_test.go", 1, "package lib"), m("src/main.go", 1, "package main")}, Skipped: 1}},
		{"glob filter", `{"pattern":"package","glob":"**/*_test.go"}`, filesystem.GrepResult{Matches: []filesystem.Match{m("src/lib/x_test.go", 1, "package lib")}}},
		{"one file", `{"pattern":"same","path":"dup.txt"}`, filesystem.GrepResult{Matches: []filesystem.Match{m("dup.txt", 2, "same"), m("dup.txt", 4, "same")}}},
		{"case", `{"pattern":"HELLO","case_insensitive":true,"path":"src"}`, filesystem.GrepResult{Matches: []filesystem.Match{m("src/lib/lib.go", 3, "// Hello says hi."), m("src/lib/lib.go", 4, "func Hello() {}")}}},
		{"cap", `{"pattern":"same","max_matches":1}`, filesystem.GrepResult{Matches: []filesystem.Match{m("dup.txt", 2, "same")}, Truncated: true, Skipped: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ret := h.call(filesystem.GrepTool, tt.args, false)
			var got filesystem.GrepResult
			if err := json.Unmarshal(ret.Content, &got); err != nil || ret.Kind != toolsets.KindSuccess {
				t.Fatalf("grep = %s %s", ret.Kind, ret.Content)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	if ret := h.call(filesystem.GrepTool, `{"pattern":"("}`, false); ret.Kind != toolsets.KindInvalidArguments {
		t.Errorf("bad regexp = %s", ret.Kind)
	}
}

func TestList(t *testing.T) {
	h := bound(t, newVirtual(t))
	ret := h.call(filesystem.ListTool, `{"path":"src"}`, false)
	var got filesystem.ListResult
	if err := json.Unmarshal(ret.Content, &got); err != nil {
		t.Fatal(err, string(ret.Content))
	}
	want := filesystem.ListResult{Path: "src", Entries: []filesystem.Entry{{Name: "lib", Type: "dir"}, {Name: "main.go", Type: "file", Size: int64(len(files["src/main.go"]))}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func m(path string, line int, text string) filesystem.Match {
	return filesystem.Match{Path: path, Line: line, Text: text}
}
