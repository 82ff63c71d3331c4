package filesystem_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/virtual"
	"github.com/weft-run/weft/toolsets/filesystem"
)

// A filesystem toolset over a virtual environment, called through a
// registry: an edit waits for approval, runs once approved, and records
// its effect; an edit whose text is missing gets guidance.
func Example() {
	ctx := context.Background()
	env, _ := virtual.New(virtual.Files{"README.md": "hello\n"})
	fs, _ := filesystem.New(filesystem.WithProvider(env))
	prep, _ := toolsets.Resolve(ctx, fs, nil)
	reg := toolsets.NewRegistry()
	_ = reg.Register(prep.Tools...)

	edit := json.RawMessage(`{"path":"README.md","old_string":"hello","new_string":"hello, weft"}`)
	ret := reg.Call(ctx, toolsets.Invocation{CallID: "c1", Name: filesystem.EditTool, Arguments: edit, SessionID: "s1", RunID: "r1"})
	fmt.Println(ret.Kind)

	ret = reg.Call(ctx, toolsets.Invocation{CallID: "c1", Name: filesystem.EditTool, Arguments: edit, SessionID: "s1", RunID: "r1",
		Approval: &toolsets.Approval{DecidedBy: "alice"}})
	e := ret.Metadata[environment.MetaEffect].(environment.Effect)
	fmt.Println(ret.Kind, e.Kind, e.Path, e.CallID, e.Replacements)
	fmt.Printf("%q\n", env.Files()["README.md"])

	missing := json.RawMessage(`{"path":"README.md","old_string":"goodbye","new_string":"x"}`)
	ret = reg.Call(ctx, toolsets.Invocation{CallID: "c2", Name: filesystem.EditTool, Arguments: missing, Approval: &toolsets.Approval{}})
	fmt.Println(ret.Kind, ret.IsError, ret.Metadata["reason"])
	// Output:
	// approval_required
	// success edit README.md c1 1
	// "hello, weft\n"
	// feedback false no_match
}
