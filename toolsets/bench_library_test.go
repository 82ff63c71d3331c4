package toolsets_test

import (
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

// BenchmarkLibrarySearchStep measures one step of a run over a library of
// 1,000 tools with tool search: preparing the search toolset for a session
// that has loaded 20 tools, plus one search call that scores all 1,000.
func BenchmarkLibrarySearchStep(b *testing.B) {
	lib := bigLibrary(b, 1000)
	s, err := toolsets.NewSearch(lib, 20)
	if err != nil {
		b.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	tc := &toolsets.ToolsetContext{SessionID: "s1", RunID: "r1"}
	p, err := s.Prepare(b.Context(), tc)
	if err != nil {
		b.Fatal(err)
	}
	if err := reg.AddToolset(b.Context(), preparedSet{s.Info(), p}); err != nil {
		b.Fatal(err)
	}
	inv := toolsets.Invocation{Name: toolsets.SearchToolName, Arguments: json.RawMessage(`{"query":"tool_42 operation files"}`), SessionID: "s1"}
	b.ReportAllocs()
	for b.Loop() {
		if ret := reg.Call(b.Context(), inv); ret.Kind != toolsets.KindSuccess {
			b.Fatalf("%s %s", ret.Kind, ret.ModelContent())
		}
		p, err := s.Prepare(b.Context(), tc)
		if err != nil || len(p.Tools) != 21 {
			b.Fatalf("%d tools, %v", len(p.Tools), err)
		}
	}
}

// BenchmarkLibraryProxyStep measures one step over a library of 1,000
// tools through the proxy: preparing it, one search and one proxied call.
func BenchmarkLibraryProxyStep(b *testing.B) {
	lib := bigLibrary(b, 1000)
	px, err := toolsets.NewProxy(lib, "lib", 10)
	if err != nil {
		b.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(b.Context(), px); err != nil {
		b.Fatal(err)
	}
	tc := &toolsets.ToolsetContext{SessionID: "s1", RunID: "r1"}
	search := toolsets.Invocation{Name: "lib_search_tool", Arguments: json.RawMessage(`{"query":"tool_999"}`), SessionID: "s1"}
	call := toolsets.Invocation{Name: "lib_call_tool", Arguments: json.RawMessage(`{"name":"tool_999","arguments":{"path":"a"}}`), SessionID: "s1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := px.Prepare(b.Context(), tc); err != nil {
			b.Fatal(err)
		}
		if ret := reg.Call(b.Context(), search); ret.Kind != toolsets.KindSuccess {
			b.Fatalf("%s %s", ret.Kind, ret.ModelContent())
		}
		if ret := reg.Call(b.Context(), call); ret.Kind != toolsets.KindSuccess {
			b.Fatalf("%s %s", ret.Kind, ret.ModelContent())
		}
	}
}

// BenchmarkLibraryBuild measures building a library of 1,000 tools (once
// per agent: every definition is checked and its schema compiled).
func BenchmarkLibraryBuild(b *testing.B) {
	for b.Loop() {
		bigLibrary(b, 1000)
	}
}
