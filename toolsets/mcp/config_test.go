package mcp_test

import (
	"errors"
	"testing"

	"github.com/weft-run/weft/toolsets/mcp"
)

func TestConfigValidation(t *testing.T) {
	ok := mcp.Config{Name: "srv", Transport: mcp.Stdio("server")}
	tests := []struct {
		name   string
		change func(*mcp.Config)
		field  string // "" = valid
	}{
		{name: "valid stdio", change: func(*mcp.Config) {}},
		{name: "valid streamable http", change: func(c *mcp.Config) { c.Transport = mcp.StreamableHTTP("https://example.com/mcp") }},
		{name: "legacy sse accepted", change: func(c *mcp.Config) { c.Transport = mcp.SSE("http://127.0.0.1:3001/sse") }},
		{name: "no name", change: func(c *mcp.Config) { c.Name = "" }, field: "Name"},
		{name: "name with a space", change: func(c *mcp.Config) { c.Name = "my server" }, field: "Name"},
		{name: "no transport", change: func(c *mcp.Config) { c.Transport = mcp.Transport{} }, field: "Transport"},
		{name: "no command", change: func(c *mcp.Config) { c.Transport = mcp.Stdio("") }, field: "Transport.Command"},
		{name: "not an http url", change: func(c *mcp.Config) { c.Transport = mcp.StreamableHTTP("ftp://example.com") }, field: "Transport.URL"},
		{name: "headers on stdio", change: func(c *mcp.Config) { c.Headers = map[string]mcp.Value{"a": mcp.Literal("b")} }, field: "Headers"},
		{name: "value both env and text", change: func(c *mcp.Config) {
			c.Transport = c.Transport.WithEnv("X", mcp.Value{Env: "A", Text: "b"})
		}, field: "Transport.Env[X]"},
		{name: "bad prefix", change: func(c *mcp.Config) { c.ToolPrefix = "a.b" }, field: "ToolPrefix"},
		{name: "tool declared twice", change: func(c *mcp.Config) { c.Tools = []mcp.ToolSpec{{Name: "a"}, {Name: "a"}} }, field: "Tools[1].Name"},
		{name: "schema not JSON", change: func(c *mcp.Config) { c.Tools = []mcp.ToolSpec{{Name: "a", Parameters: []byte("{")}} }, field: "Tools[0].Parameters"},
		{name: "declared tools required", change: func(c *mcp.Config) { c.UseDeclaredTools = true }, field: "UseDeclaredTools"},
		{name: "resource twice", change: func(c *mcp.Config) {
			c.Resources = []mcp.ResourceSpec{{URI: "file:///a"}, {URI: "file:///a"}}
		}, field: "Resources[1].URI"},
		{name: "prompt without name", change: func(c *mcp.Config) { c.Prompts = []mcp.PromptSpec{{}} }, field: "Prompts[0].Name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.change(&c)
			_, err := mcp.New(c)
			var ce *mcp.ConfigError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("New = %v", err)
			case tt.field != "" && (!errors.As(err, &ce) || ce.Field != tt.field || !errors.Is(err, mcp.ErrConfig)):
				t.Fatalf("New = %v, want a ConfigError on %s", err, tt.field)
			}
		})
	}
}

func TestDeferredNeedsDeclaredTools(t *testing.T) {
	_, err := mcp.NewDeferred(mcp.Config{Name: "srv", Transport: mcp.StreamableHTTP("https://example.com/mcp")})
	if !errors.Is(err, mcp.ErrConfig) {
		t.Fatalf("NewDeferred = %v", err)
	}
}

// Declared tools carry the server, transport and original name, under a
// prefixed weft name whose disallowed characters became '_'.
func TestDeferredDeclaredMetadata(t *testing.T) {
	ts, err := mcp.NewDeferred(mcp.Config{Name: "gh", Transport: mcp.SSE("https://example.com/sse"), ToolPrefix: "gh",
		Tools: []mcp.ToolSpec{{Name: "repo.search", Metadata: map[string]any{"bundle": "repos"}}}})
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, ts)
	d := h.def("gh_repo_search")
	for k, v := range map[string]any{mcp.MetaServer: "gh", mcp.MetaTransport: "sse", mcp.MetaTool: "repo.search", "bundle": "repos", "deferred_call": true} {
		if d.Metadata[k] != v {
			t.Errorf("metadata[%s] = %v, want %v", k, d.Metadata[k], v)
		}
	}
}
