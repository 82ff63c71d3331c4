package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/mcp"
)

// BenchmarkLiveCall measures one echo call through the registry to the Go
// test server over stdio (a session already open).
func BenchmarkLiveCall(b *testing.B) {
	exe, _ := mcpTestExe()
	ts, err := mcp.New(mcp.Config{Name: "gs", Transport: mcp.Stdio(exe).WithEnv(envServer, mcp.Literal("1")).WithEnv(envLog, mcp.Literal(b.TempDir()+"/log"))})
	if err != nil {
		b.Fatal(err)
	}
	defer ts.Close()
	lc := toolsets.NewLifecycle(ts)
	tc := &toolsets.ToolsetContext{RunID: "bench"}
	prep, _, err := lc.Prepare(context.Background(), tc)
	if err != nil {
		b.Fatal(err)
	}
	defer lc.Exit(context.Background(), tc)
	st, err := toolsets.New("gs", prep.Tools)
	if err != nil {
		b.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(context.Background(), st); err != nil {
		b.Fatal(err)
	}
	inv := toolsets.Invocation{CallID: "c", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`), RunID: "bench"}
	for b.Loop() {
		if r := reg.Call(context.Background(), inv); r.Kind != toolsets.KindSuccess {
			b.Fatal(r.Kind)
		}
	}
}
