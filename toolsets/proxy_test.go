package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

func proxyLibrary(t *testing.T) *toolsets.Library {
	t.Helper()
	failing, err := toolsets.NewFunc("render_html", func(context.Context, pathArgs) (string, error) {
		return "", errors.New("bad <b>markup</b> & more")
	})
	if err != nil {
		t.Fatal(err)
	}
	ws := staticSet(t, "workspace", "read_file", "write_file")
	guarded, err := toolsets.RequireApproval(ws, []string{"write_file"}, "review writes")
	if err != nil {
		t.Fatal(err)
	}
	ext, err := toolsets.Defer(staticSet(t, "external", "run_job"), []string{"*"}, "external worker")
	if err != nil {
		t.Fatal(err)
	}
	other, err := toolsets.New("other", []toolsets.Tool{failing})
	if err != nil {
		t.Fatal(err)
	}
	lib, err := toolsets.NewLibrary(t.Context(), guarded, ext, other)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func TestProxyToolset(t *testing.T) {
	lib := proxyLibrary(t)
	p, err := toolsets.NewProxy(lib, "workspace", 5)
	if err != nil {
		t.Fatal(err)
	}
	tc := &toolsets.ToolsetContext{SessionID: "s1", RunID: "r1"}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(t.Context(), preparedSetOf(t, p, tc)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"workspace_search_tool", "workspace_call_tool"}, reg.Names()); diff != "" {
		t.Fatalf("model tools (-want +got):\n%s", diff)
	}
	call := func(name, args string, approval *toolsets.Approval, deferred *toolsets.DeferredResult) toolsets.Return {
		return reg.Call(t.Context(), toolsets.Invocation{CallID: "c1", Name: name, Arguments: json.RawMessage(args), SessionID: "s1", RunID: "r1", Approval: approval, Deferred: deferred})
	}
	tests := []struct {
		name     string
		tool     string
		args     string
		approval *toolsets.Approval
		deferred *toolsets.DeferredResult
		kind     toolsets.Kind
		content  string // substring of the model content
	}{
		{"search", "workspace_search_tool", `{"query":"read file"}`, nil, nil, toolsets.KindSuccess, `"name":"read_file"`},
		{"search without match", "workspace_search_tool", `{"query":"kubernetes"}`, nil, nil, toolsets.KindFeedback, `No tool matches`},
		{"empty search", "workspace_search_tool", `{"query":""}`, nil, nil, toolsets.KindFeedback, `query is empty`},
		{"call", "workspace_call_tool", `{"name":"read_file","arguments":{"path":"a.txt"}}`, nil, nil, toolsets.KindSuccess, `read_file:a.txt`},
		{"call without a name", "workspace_call_tool", `{"name":"","arguments":{}}`, nil, nil, toolsets.KindInvalidArguments, `name of the tool to call is required`},
		{"call with a blank name", "workspace_call_tool", `{"name":"  "}`, nil, nil, toolsets.KindInvalidArguments, `workspace_search_tool`},
		{"call of an unknown tool", "workspace_call_tool", `{"name":"<script>","arguments":{}}`, nil, nil, toolsets.KindFeedback, `&lt;script&gt;`},
		{"call with bad arguments", "workspace_call_tool", `{"name":"read_file","arguments":{"file":"a.txt"}}`, nil, nil, toolsets.KindFeedback, `invalid_arguments`},
		{"failure is escaped text", "workspace_call_tool", `{"name":"render_html","arguments":{"path":"x"}}`, nil, nil, toolsets.KindFeedback, `bad &lt;b&gt;markup&lt;/b&gt; &amp; more`},
		{"approval propagates", "workspace_call_tool", `{"name":"write_file","arguments":{"path":"a.txt"}}`, nil, nil, toolsets.KindApprovalRequired, `review writes`},
		{"approved call runs", "workspace_call_tool", `{"name":"write_file","arguments":{"path":"a.txt"}}`, &toolsets.Approval{DecidedBy: "ui"}, nil, toolsets.KindSuccess, `write_file:a.txt`},
		{"deferral propagates", "workspace_call_tool", `{"name":"run_job","arguments":{"path":"j"}}`, nil, nil, toolsets.KindCallDeferred, `external worker`},
		{"deferred result returns", "workspace_call_tool", `{"name":"run_job","arguments":{"path":"j"}}`, nil, &toolsets.DeferredResult{Value: json.RawMessage(`"done"`)}, toolsets.KindSuccess, `done`},
		{"hidden tools are not callable directly", "read_file", `{"path":"a.txt"}`, nil, nil, toolsets.KindNotFound, `no tool named`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ret := call(tt.tool, tt.args, tt.approval, tt.deferred)
			text := string(ret.ModelContent())
			var s string
			if json.Unmarshal(ret.ModelContent(), &s) == nil {
				text = s
			}
			if ret.Kind != tt.kind || !strings.Contains(text, tt.content) {
				t.Errorf("return %s %s, want %s containing %s", ret.Kind, ret.ModelContent(), tt.kind, tt.content)
			}
		})
	}
	want := toolsets.SearchState{LoadedTools: []string{"read_file", "write_file", "run_job"}, LoadedNamespaces: []string{"workspace", "external"}}
	if diff := cmp.Diff(want, p.State("s1")); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

func TestNewProxyNames(t *testing.T) {
	lib := proxyLibrary(t)
	tests := []struct {
		name   string
		prefix string
		tools  []string
		is     error
	}{
		{"no prefix", "", []string{"search_tool", "call_tool"}, nil},
		{"prefix", "ops", []string{"ops_search_tool", "ops_call_tool"}, nil},
		{"invalid prefix", "ops tools", nil, toolsets.ErrInvalidName},
		{"prefix too long", strings.Repeat("p", toolsets.MaxNameLen-len("_search_tool")+1), nil, toolsets.ErrInvalidWrapper},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := toolsets.NewProxy(lib, tt.prefix, 3)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			if err != nil {
				return
			}
			prep, _ := p.Prepare(t.Context(), nil)
			if diff := cmp.Diff(tt.tools, toolNames(prep)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProxyReservedNames: library tools named like the proxy's own tools
// (with or without its prefix) are neither found, nor loaded, nor called
// through it, and the instruction names the namespaces it reaches.
func TestProxyReservedNames(t *testing.T) {
	tests := []struct {
		prefix   string
		reserved []string
	}{
		{"", []string{"search_tool", "call_tool"}},
		{"ops", []string{"search_tool", "call_tool", "ops_search_tool", "ops_call_tool"}},
	}
	for _, tt := range tests {
		t.Run("prefix "+tt.prefix, func(t *testing.T) {
			clash := staticSet(t, "clash", tt.reserved...)
			lib, err := toolsets.NewLibrary(t.Context(), staticSet(t, "workspace", "read_file"), clash, staticSet(t, "tickets", "search_tickets"))
			if err != nil {
				t.Fatal(err)
			}
			var records []toolsets.SearchRecord
			p, err := toolsets.NewProxy(lib, tt.prefix, 10, toolsets.OnSearch(func(r toolsets.SearchRecord) { records = append(records, r) }))
			if err != nil {
				t.Fatal(err)
			}
			tc := &toolsets.ToolsetContext{SessionID: "s1", RunID: "r1"}
			prep, err := p.Prepare(t.Context(), tc)
			if err != nil {
				t.Fatal(err)
			}
			if len(records) != 1 || records[0].Outcome != toolsets.SearchInitialized {
				t.Fatalf("records %+v, want one initialized record", records)
			}
			if diff := cmp.Diff([]string{"read_file", "search_tickets"}, records[0].Tools); diff != "" {
				t.Errorf("searchable tools (-want +got):\n%s", diff)
			}
			if len(prep.Instructions) != 1 || !strings.Contains(prep.Instructions[0].Text, "namespaces: workspace, tickets.") {
				t.Errorf("instructions %+v, want the namespaces workspace, tickets", prep.Instructions)
			}
			reg := toolsets.NewRegistry()
			if err := reg.AddToolset(t.Context(), preparedSetOf(t, p, tc)); err != nil {
				t.Fatal(err)
			}
			names := reg.Names()
			search, call := names[0], names[1]
			ret := reg.Call(t.Context(), toolsets.Invocation{CallID: "c1", Name: search, Arguments: json.RawMessage(`{"query":"search tool call ops"}`), SessionID: "s1", RunID: "r1"})
			var hits []struct{ Name string }
			if err := json.Unmarshal(ret.ModelContent(), &hits); err != nil {
				t.Fatalf("search: %s %s", ret.Kind, ret.ModelContent())
			}
			for _, h := range hits {
				if slices.Contains(tt.reserved, h.Name) {
					t.Errorf("search found the reserved tool %s", h.Name)
				}
			}
			for _, name := range tt.reserved {
				ret := reg.Call(t.Context(), toolsets.Invocation{CallID: "c2", Name: call, Arguments: json.RawMessage(`{"name":"` + name + `","arguments":{"path":"p"}}`), SessionID: "s1", RunID: "r1"})
				if ret.Kind != toolsets.KindFeedback || !strings.Contains(string(ret.ModelContent()), "There is no tool named") {
					t.Errorf("call of %s: %s %s, want feedback that there is no such tool", name, ret.Kind, ret.ModelContent())
				}
			}
			if err := p.Restore("s2", toolsets.SearchState{LoadedTools: []string{"call_tool"}}); !errors.Is(err, toolsets.ErrInvalidDefinition) {
				t.Errorf("restoring a reserved tool: err = %v, want ErrInvalidDefinition", err)
			}
			for _, name := range p.State("s1").LoadedTools {
				if slices.Contains(tt.reserved, name) {
					t.Errorf("the reserved tool %s is loaded", name)
				}
			}
		})
	}
}

// A tool called through the proxy sees the run's model retries of the
// proxy's call tool (the name the model called).
func TestProxyPassesModelRetries(t *testing.T) {
	var seen []int
	probe, err := toolsets.NewContextFunc("probe", func(_ context.Context, tc *toolsets.ToolContext, _ struct{}) (string, error) {
		seen = append(seen, tc.ModelRetries)
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := toolsets.New("probes", []toolsets.Tool{probe}, toolsets.WithID("probes"))
	if err != nil {
		t.Fatal(err)
	}
	lib, err := toolsets.NewLibrary(t.Context(), inner)
	if err != nil {
		t.Fatal(err)
	}
	p, err := toolsets.NewProxy(lib, "", 5)
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(t.Context(), preparedSetOf(t, p, &toolsets.ToolsetContext{SessionID: "s1", RunID: "r1"})); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 2} {
		ret := reg.Call(t.Context(), toolsets.Invocation{CallID: "c1", Name: "call_tool", Arguments: json.RawMessage(`{"name":"probe","arguments":{}}`),
			SessionID: "s1", RunID: "r1", ModelRetries: n})
		if ret.Kind != toolsets.KindSuccess {
			t.Fatalf("call_tool with %d model retries: %s %s", n, ret.Kind, ret.Content)
		}
	}
	if diff := cmp.Diff([]int{0, 2}, seen); diff != "" {
		t.Fatalf("model retries seen by the proxied tool (-want +got):\n%s", diff)
	}
}
