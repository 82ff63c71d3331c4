package agentspec

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
	"github.com/weft-run/weft/toolsets/environment/local"
	"github.com/weft-run/weft/toolsets/filesystem"
	"github.com/weft-run/weft/toolsets/mcp"
	"github.com/weft-run/weft/toolsets/shell"
)

// DefaultRemoteWait is how long Register waits for workers to describe a
// remote toolset's tools when the spec sets no wait.
const DefaultRemoteWait = 10 * time.Second

// DefaultMaxResults is a search's or proxy's max_results when unset.
const DefaultMaxResults = 5

// toolset builds the toolset ts declares at the field path p.
func (b *builder) toolset(ctx context.Context, p string, ts *Toolset) (toolsets.Toolset, error) {
	switch {
	case ts.Remote != nil:
		wait := time.Duration(ts.Remote.Wait)
		if wait == 0 {
			wait = DefaultRemoteWait
		}
		ctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		out, err := b.rt.RemoteTools(ctx, ts.Remote.Tools...)
		if err != nil {
			return nil, b.wrap(p+".remote.tools", "describe the remote tools", err)
		}
		return out, nil
	case ts.MCP != nil:
		return b.mcp(p+".mcp", ts.MCP)
	case ts.Filesystem != nil:
		fs := ts.Filesystem
		env, err := b.root(p+".filesystem.root", fs.Root, local.WithFilePolicy(environment.FilePolicy{DenyWrite: fs.ReadOnly}))
		if err != nil {
			return nil, err
		}
		opts := []filesystem.Option{filesystem.WithProvider(env)}
		if fs.Name != "" {
			opts = append(opts, filesystem.WithName(fs.Name))
		}
		if fs.WithoutApproval {
			opts = append(opts, filesystem.WithoutApproval())
		}
		out, err := filesystem.New(opts...)
		if err != nil {
			return nil, b.wrap(p+".filesystem", "build the toolset", err)
		}
		return out, nil
	case ts.Shell != nil:
		sh := ts.Shell
		env, err := b.root(p+".shell.root", sh.Root, local.WithShellPolicy(environment.ShellPolicy{
			AllowedPrograms: sh.AllowedPrograms, InheritEnv: sh.InheritEnv, Timeout: time.Duration(sh.Timeout)}))
		if err != nil {
			return nil, err
		}
		opts := []shell.Option{shell.WithProvider(env)}
		if sh.Name != "" {
			opts = append(opts, shell.WithName(sh.Name))
		}
		if sh.WithoutApproval {
			opts = append(opts, shell.WithoutApproval())
		}
		out, err := shell.New(opts...)
		if err != nil {
			return nil, b.wrap(p+".shell", "build the toolset", err)
		}
		return out, nil
	case ts.Search != nil:
		lib, err := b.library(ctx, p+".search.over", ts.Search.Over)
		if err != nil {
			return nil, err
		}
		var opts []toolsets.SearchOption
		if ts.Search.Name != "" {
			opts = append(opts, toolsets.SearchName(ts.Search.Name))
		}
		out, err := toolsets.NewSearch(lib, orDefault(ts.Search.MaxResults, DefaultMaxResults), opts...)
		if err != nil {
			return nil, b.wrap(p+".search", "build the tool search", err)
		}
		return out, nil
	case ts.Proxy != nil:
		lib, err := b.library(ctx, p+".proxy.over", ts.Proxy.Over)
		if err != nil {
			return nil, err
		}
		out, err := toolsets.NewProxy(lib, ts.Proxy.Prefix, orDefault(ts.Proxy.MaxResults, DefaultMaxResults))
		if err != nil {
			return nil, b.wrap(p+".proxy", "build the tool proxy", err)
		}
		return out, nil
	}
	return nil, b.wrap(p, "no toolset kind is set", nil)
}

// library builds the toolsets a search or proxy reaches.
func (b *builder) library(ctx context.Context, p string, over []Toolset) (*toolsets.Library, error) {
	var tss []toolsets.Toolset
	for i := range over {
		ts, err := b.toolset(ctx, fmt.Sprintf("%s[%d]", p, i), &over[i])
		if err != nil {
			return nil, err
		}
		tss = append(tss, ts)
	}
	lib, err := toolsets.NewLibrary(ctx, tss...)
	if err != nil {
		return nil, b.wrap(p, "build the tool library", err)
	}
	return lib, nil
}

// root opens the local environment of a toolset's root; Hosted.Close
// releases it.
func (b *builder) root(p, root string, opts ...local.Option) (*local.Provider, error) {
	env, err := local.New(b.f.path(root), opts...)
	if err != nil {
		return nil, b.wrap(p, "open the root", err)
	}
	b.h.closers = append(b.h.closers, env)
	return env, nil
}

// mcp builds an MCP server's toolset: live (weft connects and lists its
// tools) or deferred (its declared tools, completed by the host).
func (b *builder) mcp(p string, m *MCP) (toolsets.Toolset, error) {
	c, err := b.mcpConfig(p, m)
	if err != nil {
		return nil, err
	}
	if m.Mode == "deferred" {
		ts, err := mcp.NewDeferred(c)
		if err != nil {
			return nil, b.wrap(p, "build the MCP toolset", err)
		}
		return ts, nil
	}
	ts, err := mcp.New(c)
	if err != nil {
		return nil, b.wrap(p, "build the MCP toolset", err)
	}
	b.h.closers = append(b.h.closers, ts)
	return ts, nil
}

// mcpConfig is the mcp.Config m declares: values of variables are
// named (mcp.FromEnv), never read here.
func (b *builder) mcpConfig(p string, m *MCP) (mcp.Config, error) {
	c := mcp.Config{Name: m.Name, ID: m.ID, ToolPrefix: m.ToolPrefix, Shared: m.Shared, TrustDestructive: m.TrustDestructive,
		Timeout: time.Duration(m.Timeout)}
	switch {
	case m.Command != "":
		c.Transport = mcp.Stdio(m.Command, m.Args...)
		if m.Dir != "" {
			c.Transport = c.Transport.WithDir(b.f.path(m.Dir))
		}
		for _, k := range slices.Sorted(maps.Keys(m.Env)) {
			c.Transport = c.Transport.WithEnv(k, mcp.FromEnv(m.Env[k]))
		}
	case m.Transport == "sse":
		c.Transport = mcp.SSE(m.URL)
	default:
		c.Transport = mcp.StreamableHTTP(m.URL)
	}
	if len(m.Headers) > 0 {
		c.Headers = map[string]mcp.Value{}
		for k, h := range m.Headers {
			c.Headers[k] = mcp.Value{Env: h.Env, Prefix: h.Prefix}
		}
	}
	for i, t := range m.Tools {
		spec := mcp.ToolSpec{Name: t.Name, Description: t.Description, ApprovalRequired: t.ApprovalRequired}
		if t.Parameters != nil {
			raw, err := jsonOf(t.Parameters)
			if err != nil {
				return mcp.Config{}, b.wrap(fmt.Sprintf("%s.tools[%d].parameters", p, i), "encode the parameters", err)
			}
			spec.Parameters = raw
		}
		c.Tools = append(c.Tools, spec)
	}
	return c, nil
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}
