package toolsets_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

// hiddenFacades wrap the toolset holding a hidden tool in the ways a
// library may receive it, with the name the hidden tool has after them.
var hiddenFacades = []struct {
	name   string
	wrap   func(t *testing.T, ts toolsets.Toolset) toolsets.Toolset
	hidden string
}{
	{"bare", func(_ *testing.T, ts toolsets.Toolset) toolsets.Toolset { return ts }, "purge_fleet"},
	{"prefixed", func(t *testing.T, ts toolsets.Toolset) toolsets.Toolset {
		w, err := toolsets.Prefixed(ts, "ops")
		if err != nil {
			t.Fatal(err)
		}
		return w
	}, "ops_purge_fleet"},
	{"wrapper chain", func(t *testing.T, ts toolsets.Toolset) toolsets.Toolset {
		w, err := toolsets.Wrap(ts).
			Filtered(toolsets.Filter{Exclude: []string{"no_such_tool"}}).
			Renamed(map[string]string{"purge_fleet": "fleet_reset"}).
			ApprovalRequired([]string{"*"}, "review").
			WithMetadata(map[string]any{"team": "ops"}).
			Prefixed("prod").
			Toolset()
		if err != nil {
			t.Fatal(err)
		}
		return w
	}, "prod_fleet_reset"},
}

// hiddenLibrary returns a library of a toolset with a visible tool and a
// hidden one (wrapped by wrap), and the count of the hidden tool's runs.
func hiddenLibrary(t *testing.T, wrap func(*testing.T, toolsets.Toolset) toolsets.Toolset) (*toolsets.Library, *atomic.Int32) {
	t.Helper()
	runs := new(atomic.Int32)
	purge, err := toolsets.NewFunc("purge_fleet", func(context.Context, pathArgs) (string, error) {
		runs.Add(1)
		return "purged", nil
	}, toolsets.WithDescription("Erase every disk of the production fleet."), toolsets.WithVisibility(toolsets.Hidden))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := toolsets.New("ops", []toolsets.Tool{namedTool(t, "read_logs"), purge})
	if err != nil {
		t.Fatal(err)
	}
	lib, err := toolsets.NewLibrary(t.Context(), wrap(t, ops))
	if err != nil {
		t.Fatal(err)
	}
	return lib, runs
}

// The queries an attacker tries: the hidden tool's exact name, its name
// parts and its description's words.
func hiddenQueries(name string) []string {
	return []string{name, strings.ReplaceAll(name, "_", " "), "erase every disk of the production fleet", "purge", "fleet"}
}

// listsHidden reports whether a search's return names the hidden tool
// as a hit or shows its description.
func listsHidden(t *testing.T, ret toolsets.Return, hidden string) bool {
	t.Helper()
	if strings.Contains(string(ret.Content), "Erase every disk") {
		return true
	}
	if ret.Kind != toolsets.KindSuccess {
		return false
	}
	type hit struct{ Name string }
	var hits []hit
	var reply struct{ Loaded []hit }
	if json.Unmarshal(ret.Content, &hits) != nil {
		if err := json.Unmarshal(ret.Content, &reply); err != nil {
			t.Fatalf("search content %s: %v", ret.Content, err)
		}
		hits = reply.Loaded
	}
	for _, h := range hits {
		if h.Name == hidden {
			return true
		}
	}
	return false
}

// TestLibraryLeavesHiddenToolsOut: the library does not index a hidden
// tool, whatever facade wraps its toolset.
func TestLibraryLeavesHiddenToolsOut(t *testing.T) {
	for _, f := range hiddenFacades {
		t.Run(f.name, func(t *testing.T) {
			lib, _ := hiddenLibrary(t, f.wrap)
			if lib.Len() != 1 {
				t.Errorf("Len = %d, want 1 (the visible tool)", lib.Len())
			}
			if _, _, ok := lib.Lookup(f.hidden); ok {
				t.Errorf("Lookup(%q) found the hidden tool", f.hidden)
			}
			b, err := json.Marshal(lib)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"name":"`+f.hidden+`"`) || strings.Contains(string(b), "Erase every disk") {
				t.Errorf("the library's description names the hidden tool: %s", b)
			}
		})
	}
}

// TestProxyNeverReachesHiddenTools: the proxy's search does not list a
// hidden tool, and its call tool answers a hidden tool's name as it
// answers an unknown name, without running it, with and without a prefix.
func TestProxyNeverReachesHiddenTools(t *testing.T) {
	for _, f := range hiddenFacades {
		for _, prefix := range []string{"", "lib"} {
			t.Run(f.name+"/prefix="+prefix, func(t *testing.T) {
				lib, runs := hiddenLibrary(t, f.wrap)
				p, err := toolsets.NewProxy(lib, prefix, 10)
				if err != nil {
					t.Fatal(err)
				}
				tc := &toolsets.ToolsetContext{SessionID: "s1", RunID: "r1"}
				reg := toolsets.NewRegistry()
				if err := reg.AddToolset(t.Context(), preparedSetOf(t, p, tc)); err != nil {
					t.Fatal(err)
				}
				searchName, callName := reg.Names()[0], reg.Names()[1]
				call := func(tool string, args any) toolsets.Return {
					b, _ := json.Marshal(args)
					return reg.Call(t.Context(), toolsets.Invocation{CallID: "c", Name: tool, Arguments: b, SessionID: "s1", RunID: "r1"})
				}
				for _, q := range hiddenQueries(f.hidden) {
					ret := call(searchName, map[string]string{"query": q})
					if listsHidden(t, ret, f.hidden) {
						t.Errorf("search %q lists the hidden tool: %s", q, ret.Content)
					}
				}
				hidden := call(callName, map[string]any{"name": f.hidden, "arguments": map[string]string{"path": "/"}})
				unknown := call(callName, map[string]any{"name": "no_such_tool", "arguments": map[string]string{"path": "/"}})
				if hidden.Kind != unknown.Kind || strings.ReplaceAll(string(hidden.Content), f.hidden, "no_such_tool") != string(unknown.Content) {
					t.Errorf("a call of the hidden tool is answered %s %s, an unknown name %s %s", hidden.Kind, hidden.Content, unknown.Kind, unknown.Content)
				}
				if n := runs.Load(); n != 0 {
					t.Errorf("the hidden tool ran %d times", n)
				}
				if st := p.State("s1"); slices.Contains(st.LoadedTools, f.hidden) {
					t.Errorf("the hidden tool is loaded: %v", st.LoadedTools)
				}
			})
		}
	}
}

// TestSearchNeverLoadsHiddenTools: tool search neither lists nor loads a
// hidden tool, nor says it is available, nor restores it.
func TestSearchNeverLoadsHiddenTools(t *testing.T) {
	for _, f := range hiddenFacades {
		t.Run(f.name, func(t *testing.T) {
			lib, _ := hiddenLibrary(t, f.wrap)
			s, err := toolsets.NewSearch(lib, 10)
			if err != nil {
				t.Fatal(err)
			}
			tc := &toolsets.ToolsetContext{SessionID: "s1", RunID: "r1"}
			reg := toolsets.NewRegistry()
			if err := reg.AddToolset(t.Context(), preparedSetOf(t, s, tc)); err != nil {
				t.Fatal(err)
			}
			for _, q := range hiddenQueries(f.hidden) {
				b, _ := json.Marshal(map[string]string{"query": q})
				ret := reg.Call(t.Context(), toolsets.Invocation{CallID: "c", Name: toolsets.SearchToolName, Arguments: b, SessionID: "s1", RunID: "r1"})
				if listsHidden(t, ret, f.hidden) {
					t.Errorf("search %q lists the hidden tool: %s", q, ret.Content)
				}
			}
			p, err := toolsets.Resolve(t.Context(), s, tc)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range p.Tools {
				if name := tool.Definition().Name; name == f.hidden {
					t.Errorf("the next preparation offers the hidden tool %q", name)
				}
			}
			if err := s.Restore("s2", toolsets.SearchState{LoadedTools: []string{f.hidden}}); err == nil {
				t.Errorf("Restore loaded the hidden tool %q", f.hidden)
			}
		})
	}
}
