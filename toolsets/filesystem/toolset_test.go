package filesystem_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/local"
	"github.com/weft-run/weft/toolsets/environment/virtual"
	"github.com/weft-run/weft/toolsets/filesystem"
)

var files = virtual.Files{
	"README.md":         "hello\nworld\n",
	"src/main.go":       "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
	"src/lib/lib.go":    "package lib\n\n// Hello says hi.\nfunc Hello() {}\n",
	"src/lib/x_test.go": "package lib\n",
	"dup.txt":           "a\nsame\nb\nsame\n",
	"bin.dat":           "\x00\x01",
}

// harness resolves ts for tc and registers its tools.
type harness struct {
	t   *testing.T
	reg *toolsets.Registry
	n   int
}

func newHarness(t *testing.T, ts toolsets.Toolset, tc *toolsets.ToolsetContext) *harness {
	t.Helper()
	p, err := toolsets.Resolve(t.Context(), ts, tc)
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(p.Tools...); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, reg: reg}
}

// call calls name with args, approved when approve is set, as call
// c<n> of run r1 in session s1.
func (h *harness) call(name, args string, approve bool) toolsets.Return {
	h.t.Helper()
	h.n++
	inv := toolsets.Invocation{CallID: "c" + string(rune('0'+h.n)), Name: name, Arguments: json.RawMessage(args), RunID: "r1", SessionID: "s1"}
	if approve {
		inv.Approval = &toolsets.Approval{DecidedBy: "test"}
	}
	return h.reg.Call(h.t.Context(), inv)
}

func newVirtual(t *testing.T, opts ...virtual.Option) *virtual.Provider {
	t.Helper()
	v, err := virtual.New(files, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func bound(t *testing.T, fsys environment.FileSystem, opts ...filesystem.Option) *harness {
	t.Helper()
	ts, err := filesystem.New(append([]filesystem.Option{filesystem.WithProvider(fsys)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return newHarness(t, ts, nil)
}

// effectOf decodes the effect in a return's metadata as the log holds it.
func effectOf(t *testing.T, ret toolsets.Return) (environment.Effect, bool) {
	t.Helper()
	v, ok := ret.Metadata[environment.MetaEffect]
	if !ok {
		return environment.Effect{}, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var e environment.Effect
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e, true
}

func TestDefinitions(t *testing.T) {
	tests := []struct {
		name     string
		opts     []filesystem.Option
		policy   environment.FilePolicy
		tools    []string
		approval []string
	}{
		{name: "default", tools: []string{"edit_file", "glob", "grep", "list_directory", "read_file", "write_file"}, approval: []string{"edit_file", "write_file"}},
		{name: "opt out", opts: []filesystem.Option{filesystem.WithoutApproval()}, tools: []string{"edit_file", "glob", "grep", "list_directory", "read_file", "write_file"}},
		{name: "read only", policy: environment.FilePolicy{DenyWrite: true}, tools: []string{"glob", "grep", "list_directory", "read_file"}},
		{name: "no reads", policy: environment.FilePolicy{DenyRead: true}, tools: []string{"glob", "list_directory", "write_file"}, approval: []string{"write_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := filesystem.New(append([]filesystem.Option{filesystem.WithProvider(newVirtual(t, virtual.WithFilePolicy(tt.policy)))}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			known, ok, err := toolsets.KnownTools(ts)
			if !ok || err != nil {
				t.Fatalf("KnownTools = %v, %v", ok, err)
			}
			var names, gated []string
			for _, tool := range known {
				d := tool.Definition()
				names = append(names, d.Name)
				if toolsets.GatingOf(d).Approval {
					gated = append(gated, d.Name)
				}
				mutating := d.Name == filesystem.WriteTool || d.Name == filesystem.EditTool
				if d.Sequential != mutating || d.ConcurrentSafe == mutating {
					t.Errorf("%s: sequential %v, concurrent-safe %v", d.Name, d.Sequential, d.ConcurrentSafe)
				}
			}
			slices.Sort(names)
			slices.Sort(gated)
			if d := cmp.Diff(tt.tools, names); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.approval, gated); d != "" {
				t.Errorf("approval-required (-want +got):\n%s", d)
			}
		})
	}
}

// TestApproval: a write waits for approval by default and runs once
// approved, recording its effect with the call's key; with the opt-out it
// runs at once.
func TestApproval(t *testing.T) {
	for _, optOut := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "opt out"}[optOut], func(t *testing.T) {
			v := newVirtual(t)
			var opts []filesystem.Option
			if optOut {
				opts = append(opts, filesystem.WithoutApproval())
			}
			h := bound(t, v, opts...)
			ret := h.call(filesystem.WriteTool, `{"path":"out/new.txt","content":"fresh"}`, false)
			if !optOut {
				if ret.Kind != toolsets.KindApprovalRequired {
					t.Fatalf("unapproved write = %s %s", ret.Kind, ret.Content)
				}
				if _, ok := v.Files()["out/new.txt"]; ok {
					t.Fatal("the write ran before approval")
				}
				ret = h.call(filesystem.WriteTool, `{"path":"out/new.txt","content":"fresh"}`, true)
			}
			if ret.Kind != toolsets.KindSuccess || v.Files()["out/new.txt"] != "fresh" {
				t.Fatalf("write = %s %s; files %v", ret.Kind, ret.Content, v.Files())
			}
			e, ok := effectOf(t, ret)
			want := environment.Effect{Kind: environment.EffectWrite, SessionID: "s1", RunID: "r1", CallID: ret.CallID, Tool: filesystem.WriteTool,
				Path: "out/new.txt", Bytes: 5, SHA256: environment.SHA256([]byte("fresh")), Created: true}
			if d := cmp.Diff(want, e); !ok || d != "" {
				t.Errorf("effect (-want +got):\n%s", d)
			}
		})
	}
}

func TestRead(t *testing.T) {
	h := bound(t, newVirtual(t))
	tests := []struct {
		name string
		args string
		kind toolsets.Kind
		want string
	}{
		{"whole", `{"path":"README.md"}`, toolsets.KindSuccess, `{"path":"README.md","content":"hello\nworld\n","start_line":1,"end_line":2,"total_lines":2}`},
		{"range", `{"path":"src/main.go","offset":3,"limit":2}`, toolsets.KindSuccess, `{"path":"src/main.go","content":"func main() {\n\tprintln(\"hi\")\n","start_line":3,"end_line":4,"total_lines":5}`},
		{"limit past the end", `{"path":"README.md","offset":2,"limit":10}`, toolsets.KindSuccess, `{"path":"README.md","content":"world\n","start_line":2,"end_line":2,"total_lines":2}`},
		{"offset past the end", `{"path":"README.md","offset":3}`, toolsets.KindFeedback, `"\"README.md\" has 2 lines; offset 3 is past its end."`},
		{"binary", `{"path":"bin.dat"}`, toolsets.KindFeedback, `"\"bin.dat\" is a binary file (2 bytes); read_file shows text only."`},
		{"negative", `{"path":"README.md","offset":-1}`, toolsets.KindInvalidArguments, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ret := h.call(filesystem.ReadTool, tt.args, false)
			if ret.Kind != tt.kind || tt.want != "" && string(ret.Content) != tt.want {
				t.Errorf("read = %s %s\nwant %s %s", ret.Kind, ret.Content, tt.kind, tt.want)
			}
		})
	}
}

// TestRefusals: what the provider refuses reaches the model as feedback
// with the refusal's code.
func TestRefusals(t *testing.T) {
	h := bound(t, newVirtual(t, virtual.WithFilePolicy(environment.FilePolicy{MaxReadBytes: 20})), filesystem.WithoutApproval())
	tests := []struct {
		tool, args, code string
	}{
		{filesystem.ReadTool, `{"path":"../etc/passwd"}`, "outside_root"},
		{filesystem.ReadTool, `{"path":"nope.txt"}`, "not_found"},
		{filesystem.ReadTool, `{"path":"src/main.go"}`, "too_large"},
		{filesystem.WriteTool, `{"path":"../x","content":"x"}`, "outside_root"},
		{filesystem.ListTool, `{"path":"../"}`, "outside_root"},
		{filesystem.EditTool, `{"path":"nope.txt","old_string":"a","new_string":"b"}`, "not_found"},
	}
	for _, tt := range tests {
		ret := h.call(tt.tool, tt.args, false)
		if ret.Kind != toolsets.KindFeedback || ret.Metadata[environment.MetaRefused] != tt.code {
			t.Errorf("%s %s = %s %s %v; want feedback %q", tt.tool, tt.args, ret.Kind, ret.Content, ret.Metadata, tt.code)
		}
	}
}

// TestLocalRefusals runs the tools over a local root with a link out of
// it and a link inside it.
func TestLocalRefusals(t *testing.T) {
	tmp := t.TempDir()
	root, outside := filepath.Join(tmp, "root"), filepath.Join(tmp, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	for target, link := range map[string]string{"../outside/secret": "out", "a.txt": "in"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	h := bound(t, p, filesystem.WithoutApproval())
	tests := []struct {
		tool, args, code string
	}{
		{filesystem.ReadTool, `{"path":"out"}`, "outside_root"},
		{filesystem.ReadTool, `{"path":"` + filepath.Join(outside, "secret") + `"}`, "outside_root"},
		{filesystem.WriteTool, `{"path":"in","content":"x"}`, "symlink"},
		{filesystem.WriteTool, `{"path":"out","content":"x"}`, "symlink"},
		{filesystem.EditTool, `{"path":"in","old_string":"inside","new_string":"x"}`, "symlink"},
		{filesystem.GrepTool, `{"pattern":"x","path":"out"}`, "outside_root"},
	}
	for _, tt := range tests {
		ret := h.call(tt.tool, tt.args, false)
		if ret.Kind != toolsets.KindFeedback || ret.Metadata[environment.MetaRefused] != tt.code {
			t.Errorf("%s %s = %s %s %v; want feedback %q", tt.tool, tt.args, ret.Kind, ret.Content, ret.Metadata, tt.code)
		}
	}
	for f, want := range map[string]string{filepath.Join(outside, "secret"): "OUTSIDE", filepath.Join(root, "a.txt"): "inside"} {
		if b, _ := os.ReadFile(f); string(b) != want {
			t.Errorf("%s = %q, want %q", f, b, want)
		}
	}
}

func TestFromRun(t *testing.T) {
	ts, err := filesystem.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := toolsets.KnownTools(ts); ok {
		t.Error("a toolset without a provider is listable")
	}
	if _, err := toolsets.Resolve(t.Context(), ts, &toolsets.ToolsetContext{}); !errors.Is(err, environment.ErrNoEnvironment) {
		t.Errorf("Resolve without an environment = %v, want ErrNoEnvironment", err)
	}
	v := newVirtual(t)
	tc := &toolsets.ToolsetContext{Environment: v}
	p1, err := toolsets.Resolve(t.Context(), ts, tc)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := toolsets.Resolve(t.Context(), ts, tc)
	if len(p1.Tools) != 6 || len(p2.Tools) != 6 || p1.Tools[0] != p2.Tools[0] {
		t.Errorf("preparations: %d and %d tools, same first tool %v", len(p1.Tools), len(p2.Tools), p1.Tools[0] == p2.Tools[0])
	}
	h := newHarness(t, ts, tc)
	if ret := h.call(filesystem.ReadTool, `{"path":"README.md","limit":1}`, false); ret.Kind != toolsets.KindSuccess {
		t.Errorf("read = %s %s", ret.Kind, ret.Content)
	}
	if ret := h.call(filesystem.WriteTool, `{"path":"x","content":"x"}`, false); ret.Kind != toolsets.KindApprovalRequired {
		t.Errorf("write = %s, want approval_required", ret.Kind)
	}
}

// TestBundles: the tools' bundles select them in an approval policy.
func TestBundles(t *testing.T) {
	ts, err := filesystem.New(filesystem.WithProvider(newVirtual(t)), filesystem.WithoutApproval())
	if err != nil {
		t.Fatal(err)
	}
	gated, err := toolsets.RequireApproval(ts, []string{"filesystem.read"}, "reads are audited")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, gated, nil)
	if ret := h.call(filesystem.ReadTool, `{"path":"README.md"}`, false); ret.Kind != toolsets.KindApprovalRequired {
		t.Errorf("read = %s, want approval_required", ret.Kind)
	}
	if ret := h.call(filesystem.WriteTool, `{"path":"x","content":"x"}`, false); ret.Kind != toolsets.KindSuccess {
		t.Errorf("write = %s, want success", ret.Kind)
	}
}
