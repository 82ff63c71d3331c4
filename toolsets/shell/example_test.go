package shell_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/virtual"
	"github.com/weft-run/weft/toolsets/shell"
)

// A shell toolset over a virtual environment with one scripted command,
// built without the approval gate.
func Example() {
	ctx := context.Background()
	env, _ := virtual.New(nil, virtual.WithCommand("go test ./...", virtual.Output{Stdout: "ok\n"}))
	sh, _ := shell.New(shell.WithProvider(env), shell.WithoutApproval())
	prep, _ := toolsets.Resolve(ctx, sh, nil)
	reg := toolsets.NewRegistry()
	_ = reg.Register(prep.Tools...)

	ret := reg.Call(ctx, toolsets.Invocation{CallID: "c1", Name: shell.RunTool, Arguments: json.RawMessage(`{"argv":["go","test","./..."]}`)})
	var out shell.RunResult
	_ = json.Unmarshal(ret.Content, &out)
	fmt.Printf("%s exit %d %q\n", ret.Kind, out.ExitCode, out.Stdout)

	ret = reg.Call(ctx, toolsets.Invocation{CallID: "c2", Name: shell.RunTool, Arguments: json.RawMessage(`{"command":"make deploy"}`)})
	fmt.Println(ret.Kind, ret.Metadata[environment.MetaRefused])
	// Output:
	// success exit 0 "ok\n"
	// feedback not_supported
}
