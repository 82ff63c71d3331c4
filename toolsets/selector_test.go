package toolsets_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

// bundledTool is a path tool whose metadata puts it in bundle (a string,
// a list, or nil for none).
func bundledTool(t testing.TB, name string, bundle any) toolsets.Tool {
	t.Helper()
	var opts []toolsets.Option
	if bundle != nil {
		opts = append(opts, toolsets.WithMetadata(map[string]any{toolsets.MetaBundle: bundle}))
	}
	tool, err := toolsets.NewFunc(name, func(_ context.Context, a pathArgs) (string, error) {
		return name + ":" + a.Path, nil
	}, append(opts, toolsets.WithDescription("Tool "+name+"."))...)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// fileTools is the selectors' fixture: toolset "workspace", id "ws-v1";
// read_file in bundle "read", write_file in "filesystem" and "write",
// delete_file in "filesystem", list_dir in none.
func fileTools(t testing.TB) *toolsets.Static {
	t.Helper()
	ts, err := toolsets.New("workspace", []toolsets.Tool{
		bundledTool(t, "read_file", "read"),
		bundledTool(t, "write_file", []any{"filesystem", "write"}),
		bundledTool(t, "delete_file", []string{"filesystem"}),
		bundledTool(t, "list_dir", nil),
	}, toolsets.WithID("ws-v1"))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestSelectorMatch(t *testing.T) {
	ws := fileTools(t)
	prefixed, err := toolsets.Prefixed(ws, "p")
	if err != nil {
		t.Fatal(err)
	}
	def := func(name string, bundle any) toolsets.Definition { return bundledTool(t, name, bundle).Definition() }
	tests := []struct {
		name    string
		entries []string
		target  toolsets.Target
		want    string // the matching entry; "" for none
	}{
		{"star", []string{"*"}, toolsets.Target{Definition: def("x", nil)}, "*"},
		{"tool name", []string{"other", "x"}, toolsets.Target{Definition: def("x", nil)}, "x"},
		{"toolset name", []string{"workspace"}, toolsets.Target{Definition: def("x", nil), Toolsets: toolsets.Identities(ws)}, "workspace"},
		{"toolset id", []string{"ws-v1"}, toolsets.Target{Definition: def("x", nil), Toolsets: toolsets.Identities(ws)}, "ws-v1"},
		{"wrapper's own name", []string{"p_workspace"}, toolsets.Target{Definition: def("p_x", nil), Toolsets: toolsets.Identities(prefixed)}, "p_workspace"},
		{"wrapper's own id", []string{"p_ws-v1"}, toolsets.Target{Definition: def("p_x", nil), Toolsets: toolsets.Identities(prefixed)}, "p_ws-v1"},
		{"wrapped toolset name", []string{"workspace"}, toolsets.Target{Definition: def("p_x", nil), Toolsets: toolsets.Identities(prefixed)}, "workspace"},
		{"bundle string", []string{"fs"}, toolsets.Target{Definition: def("x", "fs")}, "fs"},
		{"bundle list", []string{"write"}, toolsets.Target{Definition: def("x", []any{"fs", "write"})}, "write"},
		{"typo", []string{"wrkspace"}, toolsets.Target{Definition: def("x", "fs"), Toolsets: toolsets.Identities(ws)}, ""},
		{"case matters", []string{"Workspace"}, toolsets.Target{Definition: def("x", nil), Toolsets: toolsets.Identities(ws)}, ""},
		{"loose tool has no toolset", []string{"workspace"}, toolsets.Target{Definition: def("x", nil)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := toolsets.NewSelector(tt.entries)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := s.Match(tt.target)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("Match = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

func TestNewSelectorRefuses(t *testing.T) {
	for _, entries := range [][]string{nil, {}, {"read_file", ""}, {"  "}} {
		if _, err := toolsets.NewSelector(entries); !errors.Is(err, toolsets.ErrInvalidSelector) {
			t.Errorf("NewSelector(%q) err = %v, want ErrInvalidSelector", entries, err)
		}
	}
}

func TestSelectorCheck(t *testing.T) {
	ws := fileTools(t)
	tools, _, _ := toolsets.KnownTools(ws)
	targets := toolsets.Targets(tools, toolsets.Identities(ws))
	empty := toolsets.ToolsetInfo{Name: "scratch", ID: "scratch-v1"}
	tests := []struct {
		name      string
		entries   []string
		unmatched []string
	}{
		{"every kind matches", []string{"*", "read_file", "workspace", "ws-v1", "filesystem", "write"}, nil},
		{"a toolset without tools exists", []string{"scratch", "scratch-v1"}, nil},
		{"typos", []string{"read_file", "reed_file", "filesytem"}, []string{"reed_file", "filesytem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := toolsets.NewSelector(tt.entries)
			if err != nil {
				t.Fatal(err)
			}
			err = s.Check("test policy", targets, []toolsets.ToolsetInfo{empty})
			if tt.unmatched == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *toolsets.SelectorError
			if !errors.Is(err, toolsets.ErrUnmatchedSelector) || !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SelectorError", err)
			}
			want := &toolsets.SelectorError{Policy: "test policy", Entries: tt.unmatched,
				Tools:    []string{"delete_file", "list_dir", "read_file", "write_file"},
				Toolsets: []string{"scratch", "scratch-v1", "workspace", "ws-v1"},
				Bundles:  []string{"filesystem", "read", "write"}}
			if diff := cmp.Diff(want, se); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			for _, s := range []string{`"reed_file"`, `"filesytem"`, "read_file", "ws-v1", "filesystem"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q does not name %s", err, s)
				}
			}
		})
	}
}

// TestGatedSelectors runs every selector kind through both gate wrappers:
// which tools are gated, what their definitions say, and what a call
// returns; and a typo fails the preparation.
func TestGatedSelectors(t *testing.T) {
	wrappers := []struct {
		name   string
		wrap   func(toolsets.Toolset, []string, string) (*toolsets.Wrapped, error)
		kind   toolsets.Kind
		flag   string
		reason string
	}{
		{"approval", toolsets.RequireApproval, toolsets.KindApprovalRequired, toolsets.MetaApprovalRequired, toolsets.MetaApprovalReason},
		{"deferred", toolsets.Defer, toolsets.KindCallDeferred, toolsets.MetaDeferredCall, toolsets.MetaDeferredReason},
	}
	all := []string{"read_file", "write_file", "delete_file", "list_dir"}
	tests := []struct {
		name    string
		prefix  string // wrap the fixture in Prefixed(prefix) first
		entries []string
		gated   []string // tool names as exposed
		typos   []string // entries the preparation must refuse
	}{
		{name: "tool name", entries: []string{"write_file"}, gated: []string{"write_file"}},
		{name: "toolset name", entries: []string{"workspace"}, gated: all},
		{name: "toolset id", entries: []string{"ws-v1"}, gated: all},
		{name: "bundle", entries: []string{"filesystem"}, gated: []string{"write_file", "delete_file"}},
		{name: "bundle from a list", entries: []string{"write"}, gated: []string{"write_file"}},
		{name: "star", entries: []string{"*"}, gated: all},
		{name: "wrapped toolset name under a prefix", prefix: "p", entries: []string{"workspace"},
			gated: []string{"p_read_file", "p_write_file", "p_delete_file", "p_list_dir"}},
		{name: "prefixed tool name", prefix: "p", entries: []string{"p_list_dir"}, gated: []string{"p_list_dir"}},
		{name: "typo", entries: []string{"filesytem"}, typos: []string{"filesytem"}},
		{name: "one typo among good entries", entries: []string{"write_file", "delet_file"}, typos: []string{"delet_file"}},
		{name: "unprefixed tool name under a prefix", prefix: "p", entries: []string{"list_dir"}, typos: []string{"list_dir"}},
	}
	for _, w := range wrappers {
		for _, tt := range tests {
			t.Run(w.name+"/"+tt.name, func(t *testing.T) {
				var inner toolsets.Toolset = fileTools(t)
				if tt.prefix != "" {
					p, err := toolsets.Prefixed(inner, tt.prefix)
					if err != nil {
						t.Fatal(err)
					}
					inner = p
				}
				ts, err := w.wrap(inner, tt.entries, "a person decides")
				if err != nil {
					t.Fatal(err)
				}
				p, err := toolsets.Resolve(t.Context(), ts, &toolsets.ToolsetContext{RunID: "r1"})
				if tt.typos != nil {
					var se *toolsets.SelectorError
					if !errors.As(err, &se) || !errors.Is(err, toolsets.ErrUnmatchedSelector) {
						t.Fatalf("prepare err = %v, want a *SelectorError", err)
					}
					if diff := cmp.Diff(tt.typos, se.Entries); diff != "" {
						t.Errorf("unmatched entries (-want +got):\n%s", diff)
					}
					if _, ok, kerr := toolsets.KnownTools(ts); !ok || !errors.Is(kerr, toolsets.ErrUnmatchedSelector) {
						t.Errorf("KnownTools = %v, %v; want the same refusal", ok, kerr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				var gotGated []string
				for _, tool := range p.Tools {
					d := tool.Definition()
					g := toolsets.GatingOf(d)
					if d.Metadata[w.flag] == true {
						gotGated = append(gotGated, d.Name)
						if d.Metadata[w.reason] != "a person decides" {
							t.Errorf("%s: reason = %v", d.Name, d.Metadata[w.reason])
						}
					} else if g.Gated() {
						t.Errorf("%s: gated by the other wrapper: %+v", d.Name, g)
					}
					ret := callTool(t, ts, toolsets.Invocation{Name: d.Name})
					want := toolsets.KindSuccess
					if slices.Contains(tt.gated, d.Name) {
						want = w.kind
					}
					if ret.Kind != want {
						t.Errorf("call %s: kind %s, want %s", d.Name, ret.Kind, want)
					}
				}
				if diff := cmp.Diff(tt.gated, gotGated); diff != "" {
					t.Errorf("gated tools (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// A dynamic toolset's tools are matched when it is prepared: an entry for
// a tool it does not offer at a step fails that step; naming the toolset
// gates the tool whenever it appears.
func TestGatedSelectorOnDynamic(t *testing.T) {
	read, deploy := namedTool(t, "read_file"), namedTool(t, "deploy")
	dyn, err := toolsets.NewDynamic("ops", toolsets.DynamicFuncs{Tools: func(_ context.Context, tc *toolsets.ToolsetContext) ([]toolsets.Tool, error) {
		if tc.RunStep == 0 {
			return []toolsets.Tool{read}, nil
		}
		return []toolsets.Tool{read, deploy}, nil
	}}, toolsets.WithID("ops-v1"))
	if err != nil {
		t.Fatal(err)
	}
	byName, err := toolsets.RequireApproval(dyn, []string{"deploy"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := toolsets.KnownTools(byName); ok {
		t.Error("a dynamic toolset was listed without being prepared")
	}
	if _, err := toolsets.Resolve(t.Context(), byName, &toolsets.ToolsetContext{RunStep: 0}); !errors.Is(err, toolsets.ErrUnmatchedSelector) {
		t.Errorf("step 0 err = %v, want ErrUnmatchedSelector (deploy is not offered)", err)
	}
	if _, err := toolsets.Resolve(t.Context(), byName, &toolsets.ToolsetContext{RunStep: 1}); err != nil {
		t.Errorf("step 1: %v", err)
	}
	byToolset, err := toolsets.RequireApproval(dyn, []string{"ops-v1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for step, want := range [][]string{{"read_file"}, {"read_file", "deploy"}} {
		p, err := toolsets.Resolve(t.Context(), byToolset, &toolsets.ToolsetContext{RunStep: step})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		var gated []string
		for _, tool := range p.Tools {
			if toolsets.GatingOf(tool.Definition()).Approval {
				gated = append(gated, tool.Definition().Name)
			}
		}
		if diff := cmp.Diff(want, gated); diff != "" {
			t.Errorf("step %d gated (-want +got):\n%s", step, diff)
		}
	}
}

// A search toolset is known by its library: an entry for a tool that no
// search has loaded yet is no typo.
func TestGatedSelectorOnSearch(t *testing.T) {
	lib, err := toolsets.NewLibrary(t.Context(), fileTools(t))
	if err != nil {
		t.Fatal(err)
	}
	search, err := toolsets.NewSearch(lib, 3, toolsets.SearchID("search-v1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		entries []string
		wantErr bool
	}{{[]string{"delete_file"}, false}, {[]string{"filesystem"}, false}, {[]string{"delete_fiel"}, true}} {
		ts, err := toolsets.RequireApproval(search, tt.entries, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = toolsets.Resolve(t.Context(), ts, &toolsets.ToolsetContext{SessionID: "s1"})
		if got := errors.Is(err, toolsets.ErrUnmatchedSelector); got != tt.wantErr || (err != nil && !tt.wantErr) {
			t.Errorf("%q: err = %v, want refusal %v", tt.entries, err, tt.wantErr)
		}
	}
}

func TestKnownTools(t *testing.T) {
	ws := fileTools(t)
	dyn, err := toolsets.NewDynamic("dyn", toolsets.DynamicFuncs{Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	keep := func(context.Context, *toolsets.ToolsetContext, []toolsets.Definition) ([]toolsets.Definition, error) {
		return nil, nil
	}
	tests := []struct {
		name  string
		build func() (toolsets.Toolset, error)
		ok    bool
		tools []string
	}{
		{"static", func() (toolsets.Toolset, error) { return ws, nil }, true, []string{"read_file", "write_file", "delete_file", "list_dir"}},
		{"prefixed and filtered", func() (toolsets.Toolset, error) {
			return toolsets.Wrap(ws).Prefixed("p").Filtered(toolsets.Filter{Include: []string{"p_read_file"}}).Toolset()
		}, true, []string{"p_read_file"}},
		{"dynamic", func() (toolsets.Toolset, error) { return dyn, nil }, false, nil},
		{"prepared depends on the context", func() (toolsets.Toolset, error) { return toolsets.Prepared(ws, keep) }, false, nil},
		{"a wrapper over a dynamic toolset", func() (toolsets.Toolset, error) { return toolsets.Prefixed(dyn, "p") }, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := tt.build()
			if err != nil {
				t.Fatal(err)
			}
			tools, ok, err := toolsets.KnownTools(ts)
			if err != nil || ok != tt.ok {
				t.Fatalf("KnownTools = %v, %v; want ok %v", ok, err, tt.ok)
			}
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Definition().Name)
			}
			if diff := cmp.Diff(tt.tools, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribeShowsGates(t *testing.T) {
	ts, err := toolsets.Wrap(fileTools(t)).ApprovalRequired([]string{"filesystem"}, "review writes").Deferred([]string{"read_file"}, "worker").Toolset()
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(t.Context(), ts); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for line := range strings.SplitSeq(reg.Describe(toolsets.Brief), "\n") {
		if name, _, ok := strings.Cut(strings.TrimPrefix(line, "- "), " "); ok {
			lines[strings.TrimSuffix(name, ":")] = line
		}
	}
	want := map[string]string{
		"read_file":   "- read_file [deferred]: Tool read_file.",
		"write_file":  "- write_file [approval required]: Tool write_file.",
		"delete_file": "- delete_file [approval required]: Tool delete_file.",
		"list_dir":    "- list_dir: Tool list_dir.",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("described (-want +got):\n%s", diff)
	}
}
