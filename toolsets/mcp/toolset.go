package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-run/weft/toolsets"
)

// Toolset is a live MCP toolset: build it with [New]. It implements
// [toolsets.Enterer], [toolsets.Refresher] and [toolsets.Exiter], so the
// runtime's lifecycle opens a session when a run enters it (or one for the
// process, [Config.Shared]), prepares it at every step and closes it when
// the run exits. It is safe for concurrent use.
type Toolset struct {
	cfg  Config
	info toolsets.ToolsetInfo

	mu     sync.Mutex
	shared *conn
	runs   map[string]*conn
}

var (
	_ toolsets.Toolset   = (*Toolset)(nil)
	_ toolsets.Enterer   = (*Toolset)(nil)
	_ toolsets.Refresher = (*Toolset)(nil)
	_ toolsets.Exiter    = (*Toolset)(nil)
)

// New builds the live toolset of server c. Nothing connects until a run
// enters it.
func New(c Config) (*Toolset, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	info := toolsets.ToolsetInfo{Name: c.Name, ID: c.ID, Timeout: c.Timeout}
	if info.ID == "" {
		info.ID, info.ImplicitID = c.Name, true
	}
	ts := &Toolset{cfg: c, info: info, runs: map[string]*conn{}}
	if c.Shared {
		ts.shared = newConn(&ts.cfg)
	}
	return ts, nil
}

// Info returns the toolset's identity and default timeout.
func (ts *Toolset) Info() toolsets.ToolsetInfo { return ts.info }

// LifecyclePolicy returns [Config.Lifecycle], which the runtime's
// lifecycle driver applies (toolsets.PolicyOf).
func (ts *Toolset) LifecyclePolicy() (toolsets.LifecyclePolicy, bool) {
	return ts.cfg.Lifecycle, ts.cfg.Lifecycle != (toolsets.LifecyclePolicy{})
}

// connFor returns the connection of tc's run (the shared one, with
// Shared), creating it when needed.
func (ts *Toolset) connFor(runID string) *conn {
	if ts.shared != nil {
		return ts.shared
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	c := ts.runs[runID]
	if c == nil {
		c = newConn(&ts.cfg)
		ts.runs[runID] = c
	}
	return c
}

// Enter opens the run's session (or the shared one): it starts the
// server, initializes the session and, unless UseDeclaredTools, lists
// the tools. A server that does not start or answer is unavailable
// (toolsets.ErrUnavailable, with its stderr tail in the message).
func (ts *Toolset) Enter(ctx context.Context, tc *toolsets.ToolsetContext) error {
	c := ts.connFor(tc.RunID)
	if _, _, err := c.session(ctx); err != nil {
		if ts.shared == nil {
			// The lifecycle does not exit a run it could not enter.
			ts.mu.Lock()
			if ts.runs[tc.RunID] == c {
				delete(ts.runs, tc.RunID)
			}
			ts.mu.Unlock()
			_ = c.close()
		}
		return err
	}
	return nil
}

// Prepare returns the server's tools for tc's run: the declared ones with
// UseDeclaredTools, else the listed ones (combined with their
// declarations), and the instructions when IncludeInstructions.
func (ts *Toolset) Prepare(ctx context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	c := ts.connFor(tc.RunID)
	inv, err := ts.inventory(ctx, c)
	if err != nil {
		return toolsets.Preparation{}, err
	}
	p := toolsets.Preparation{Tools: append([]toolsets.Tool(nil), inv.tools...)}
	if ts.cfg.IncludeInstructions {
		text := ts.cfg.Instructions
		if text == "" {
			if text, err = c.instructions(ctx); err != nil {
				return toolsets.Preparation{}, err
			}
		}
		if text != "" {
			p.Instructions = []toolsets.Instruction{{Group: ts.cfg.group(), Text: text}}
		}
	}
	return p, nil
}

// Refresh is Prepare for a later step: the tools are listed again only
// when they may have changed (see the package documentation).
func (ts *Toolset) Refresh(ctx context.Context, tc *toolsets.ToolsetContext) (toolsets.Preparation, error) {
	return ts.Prepare(ctx, tc)
}

// Exit closes the run's session (not the shared one: see Close).
func (ts *Toolset) Exit(ctx context.Context, tc *toolsets.ToolsetContext) error {
	if ts.shared != nil {
		return nil
	}
	ts.mu.Lock()
	c := ts.runs[tc.RunID]
	delete(ts.runs, tc.RunID)
	ts.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.close()
}

// Close closes every session the toolset holds, the shared one included.
// The toolset is not used afterwards.
func (ts *Toolset) Close() error {
	ts.mu.Lock()
	conns := make([]*conn, 0, len(ts.runs)+1)
	for id, c := range ts.runs {
		conns = append(conns, c)
		delete(ts.runs, id)
	}
	ts.mu.Unlock()
	if ts.shared != nil {
		conns = append(conns, ts.shared)
	}
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.close())
	}
	return errors.Join(errs...)
}

// Digest returns the digest of the tools the toolset offers to runID's
// run (the shared session's with Shared): see [Digest]. It is empty
// before the first preparation.
func (ts *Toolset) Digest(runID string) string {
	c := ts.shared
	if c == nil {
		ts.mu.Lock()
		c = ts.runs[runID]
		ts.mu.Unlock()
	}
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.built == nil {
		return ""
	}
	return c.built.digest
}

// inventory is the tools built from one listing.
type inventory struct {
	from    []*sdk.Tool
	tools   []toolsets.Tool
	digest  string
	skipped []string // listed tools weft cannot offer, and why
}

// inventory returns the tools of c, rebuilding them only when the listing
// changed, so that an unchanged step offers the very same tools.
func (ts *Toolset) inventory(ctx context.Context, c *conn) (*inventory, error) {
	if ts.cfg.UseDeclaredTools {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.built == nil {
			inv := &inventory{}
			for _, s := range ts.cfg.Tools {
				t, err := newTool(&ts.cfg, s.Name, s.Description, s.Parameters, nil, s, ts.liveCall)
				if err != nil {
					return nil, err
				}
				inv.tools = append(inv.tools, t)
			}
			inv.digest = digestOf(inv.tools)
			c.built = inv
		}
		return c.built, nil
	}
	listed, err := c.tools(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.built != nil && sameListing(c.built.from, listed) {
		return c.built, nil
	}
	inv := &inventory{from: listed}
	seen := map[string]bool{}
	for _, lt := range listed {
		spec, _ := ts.cfg.spec(lt.Name)
		params, err := json.Marshal(lt.InputSchema)
		if err != nil || lt.InputSchema == nil {
			params = nil
		}
		t, err := newTool(&ts.cfg, lt.Name, lt.Description, params, []*Annotations{annotationsOf(lt)}, spec, ts.liveCall)
		if err == nil && seen[t.def.Name] {
			err = fmt.Errorf("MCP tool %q: its weft name %q is taken by another tool", lt.Name, t.def.Name)
		}
		if err != nil {
			inv.skipped = append(inv.skipped, err.Error())
			continue
		}
		seen[t.def.Name] = true
		inv.tools = append(inv.tools, t)
	}
	inv.digest = digestOf(inv.tools)
	c.built = inv
	return inv, nil
}

// sameListing reports whether two listings are the same pointers (the
// connection lists again only when the list may have changed).
func sameListing(a, b []*sdk.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// annotationsOf returns a listed tool's annotations; a tool without any
// is a source all the same, of the spec's defaults (not read-only,
// destructive, not idempotent), so that a declaration cannot loosen them.
func annotationsOf(t *sdk.Tool) *Annotations {
	a := t.Annotations
	if a == nil {
		return &Annotations{}
	}
	return &Annotations{ReadOnly: Hint(a.ReadOnlyHint), Destructive: a.DestructiveHint, Idempotent: Hint(a.IdempotentHint), OpenWorld: a.OpenWorldHint}
}
