package toolsets_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-run/weft/toolsets"
)

// A tool library: a serialisable collection of toolsets with id checks.
func ExampleNewLibrary() {
	library, err := toolsets.NewLibrary(context.Background(), buildWorkspaceTools())
	if err != nil {
		panic(err)
	}
	definitions := library.Definitions()
	fmt.Println(len(definitions), definitions[0].Name, library.ValidateIDs().Err())
	b, _ := json.Marshal(library.Describe().Toolsets[0].ID)
	fmt.Println(string(b))
	// Output:
	// 1 read_file <nil>
	// "workspace"
}

// Tool search: the model searches; matching tools load for its next turn,
// and what a session loaded is exportable session state.
func ExampleNewSearch() {
	library, _ := toolsets.NewLibrary(context.Background(), buildWorkspaceTools())
	search, _ := toolsets.NewSearch(library, 5, toolsets.OnSearch(func(r toolsets.SearchRecord) {
		fmt.Println("tool_search."+r.Outcome, r.Query, r.Tools)
	}))
	tc := &toolsets.ToolsetContext{SessionID: "s-1", RunID: "run-1"}
	step := func() *toolsets.Registry {
		p, _ := search.Prepare(context.Background(), tc)
		reg := toolsets.NewRegistry()
		reg.AddToolset(context.Background(), preparedSet{search.Info(), p})
		fmt.Println(reg.Names())
		return reg
	}
	ret := step().Call(context.Background(), toolsets.Invocation{Name: toolsets.SearchToolName, Arguments: json.RawMessage(`{"query":"read"}`), SessionID: "s-1"})
	fmt.Println(ret.Kind)
	step()
	state, _ := json.Marshal(search.State("s-1"))
	fmt.Println(string(state))
	// Output:
	// tool_search.initialized  [read_file]
	// [search_tools]
	// tool_search.loaded read [read_file]
	// success
	// [search_tools read_file]
	// {"tool_search_loaded_tools":["read_file"],"tool_search_loaded_namespaces":["workspace"]}
}

// The tool proxy: two fixed tools over hidden toolsets.
func ExampleNewProxy() {
	library, _ := toolsets.NewLibrary(context.Background(), buildWorkspaceTools())
	proxy, err := toolsets.NewProxy(library, "workspace", 5)
	if err != nil {
		panic(err)
	}
	reg := toolsets.NewRegistry()
	reg.AddToolset(context.Background(), proxy)
	fmt.Println(reg.Names())
	ret := reg.Call(context.Background(), toolsets.Invocation{Name: "workspace_call_tool",
		Arguments: json.RawMessage(`{"name":"read_file","arguments":{"path":"README.md"}}`)})
	fmt.Println(ret.Kind, string(ret.ModelContent()))
	ret = reg.Call(context.Background(), toolsets.Invocation{Name: "workspace_call_tool",
		Arguments: json.RawMessage(`{"name":"delete_all","arguments":{}}`)})
	fmt.Println(ret.Kind, string(ret.ModelContent()))
	_, err = toolsets.NewProxy(library, "work space", 5)
	fmt.Println(err)
	// Output:
	// [workspace_search_tool workspace_call_tool]
	// success "README.md"
	// feedback "There is no tool named \"delete_all\" in the library. Use workspace_search_tool to find one."
	// tool proxy: toolsets: invalid toolset wrapper: prefix: invalid name "work space": character ' ' at byte 4 is not allowed (use 1-64 letters, digits, '_' or '-')
}
