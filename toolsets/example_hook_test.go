package toolsets_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weft-run/weft/toolsets"
)

// An agent-level hook injects a credential the tool needs; a tool-level
// hook redacts what the tool returns. The return records both rewrites by
// digests, never the values.
func ExampleHook() {
	type fetchArgs struct {
		URL   string `json:"url"`
		Token string `json:"token,omitempty"`
	}
	fetch, _ := toolsets.NewFunc("fetch", func(_ context.Context, a fetchArgs) (string, error) {
		return "page of " + a.URL + " for " + a.Token, nil
	})
	fetch, _ = toolsets.HookTool(fetch, toolsets.Hook{Name: "redact", After: func(_ context.Context, _ toolsets.HookCall, ret *toolsets.Return) error {
		var text string
		if err := json.Unmarshal(ret.Content, &text); err != nil {
			return err
		}
		ret.Content, _ = json.Marshal(strings.ReplaceAll(text, "secret-token", "[redacted]"))
		return nil
	}})
	inject := toolsets.Hook{Name: "credentials", Before: func(_ context.Context, c *toolsets.HookCall) error {
		var a fetchArgs
		if err := json.Unmarshal(c.Arguments, &a); err != nil {
			return err
		}
		a.Token = "secret-token"
		c.Arguments, _ = json.Marshal(a)
		return nil
	}}
	reg := toolsets.NewRegistry(toolsets.WithHooks(inject))
	_ = reg.Register(fetch)
	ret := reg.Call(context.Background(), toolsets.Invocation{CallID: "c1", Name: "fetch", Arguments: json.RawMessage(`{"url":"https://example.org"}`)})
	var content string
	_ = json.Unmarshal(ret.Content, &content)
	fmt.Println(ret.Kind, content)
	for _, h := range ret.Hooks {
		fmt.Println(h.Stage, h.Level, h.Hook, h.Action, strings.HasPrefix(h.DigestAfter, "sha256:"))
	}
	// Output:
	// success page of https://example.org for [redacted]
	// before agent credentials rewrote true
	// after tool redact rewrote true
}
