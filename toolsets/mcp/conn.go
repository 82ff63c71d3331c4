package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-run/weft/toolsets"
)

// conn is one logical connection to a server: an SDK session that is
// opened on first use and opened again after it is lost. It is safe for
// concurrent use; calls on it are independent of each other.
type conn struct {
	cfg *Config

	mu      sync.Mutex
	cs      *sdk.ClientSession
	d       *dialer
	gen     int  // connections made so far
	lost    bool // the current session ended without Close
	closed  bool // close was called: no reconnect
	dirty   bool // the tool list may have changed since it was listed
	listed  []*sdk.Tool
	built   *inventory // the tools built from listed
	waiters sync.WaitGroup

	tokens   atomic.Uint64
	progress sync.Map // progress token → chan *sdk.ProgressNotificationParams
}

func newConn(cfg *Config) *conn { return &conn{cfg: cfg, dirty: true} }

// session returns the live SDK session, connecting first when there is
// none or the last one was lost. The connection (initialize included) runs
// under the request timeout. A failure is an error matching
// toolsets.ErrUnavailable whose text carries the server's stderr tail,
// scrubbed of secrets.
func (c *conn) session(ctx context.Context) (*sdk.ClientSession, *redactor, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, fmt.Errorf("%w: the connection to MCP server %q is closed", toolsets.ErrUnavailable, c.cfg.Name)
	}
	if c.cs != nil && !c.lost {
		return c.cs, c.d.red, nil
	}
	if c.cs != nil {
		_ = c.cs.Close()
		c.d.transport.cancel()
		c.cs = nil
	}
	d, err := dial(c.cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: MCP server %q: %s", toolsets.ErrUnavailable, c.cfg.Name, d.redOrNil().scrub(err.Error()))
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "weft", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler:      func(context.Context, *sdk.ToolListChangedRequest) { c.markDirty() },
		ProgressNotificationHandler: c.onProgress,
		// An input-required result comes back to liveCall as it is (an
		// elicitation waits for a person in the HITL queue; see askedInput),
		// and the SDK does not answer it or send the call again by itself.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := client.Connect(ctx, d.transport, nil)
	if err != nil {
		d.transport.cancel()
		if d.cmd != nil && d.cmd.Process != nil {
			_ = d.cmd.Process.Kill()
		}
		msg := fmt.Sprintf("MCP server %q did not start: %v", c.cfg.Name, err)
		if ctx.Err() != nil {
			msg = fmt.Sprintf("MCP server %q did not answer initialize within %s: %v", c.cfg.Name, c.cfg.requestTimeout(), err)
		}
		if s := strings.TrimSpace(d.stderr.String()); s != "" {
			msg += "; stderr: " + s
		}
		return nil, nil, fmt.Errorf("%w: %s", toolsets.ErrUnavailable, d.red.scrub(msg))
	}
	c.cs, c.d, c.lost, c.dirty = cs, d, false, true
	c.gen++
	c.waiters.Add(1)
	go func() {
		defer c.waiters.Done()
		_ = cs.Wait()
		c.mu.Lock()
		if c.cs == cs {
			c.lost = true
		}
		c.mu.Unlock()
	}()
	return cs, d.red, nil
}

func (d *dialer) redOrNil() *redactor {
	if d == nil {
		return nil
	}
	return d.red
}

// markLost records that cs failed under a call, so that the next use
// reconnects.
func (c *conn) markLost(cs *sdk.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs == cs {
		c.lost = true
	}
}

func (c *conn) markDirty() {
	c.mu.Lock()
	c.dirty = true
	c.mu.Unlock()
}

// tools returns the server's tools, listing them again when the list may
// have changed: after a (re)connection, after a list_changed notification,
// and always when the server does not promise such notifications.
func (c *conn) tools(ctx context.Context) ([]*sdk.Tool, error) {
	cs, red, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	caps := cs.InitializeResult().Capabilities
	notifies := caps != nil && caps.Tools != nil && caps.Tools.ListChanged
	if !c.dirty && notifies && c.listed != nil {
		l := c.listed
		c.mu.Unlock()
		return l, nil
	}
	c.dirty = false
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.requestTimeout())
	defer cancel()
	var out []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			c.markDirty()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: MCP server %q did not list its tools within %s", toolsets.ErrUnavailable, c.cfg.Name, c.cfg.requestTimeout())
			}
			if isLost(err) {
				c.markLost(cs)
			}
			return nil, fmt.Errorf("%w: MCP server %q: tools/list: %s", toolsets.ErrUnavailable, c.cfg.Name, red.scrub(err.Error()))
		}
		out = append(out, t)
	}
	c.mu.Lock()
	c.listed = out
	c.mu.Unlock()
	return out, nil
}

// instructions returns the server's initialize instructions.
func (c *conn) instructions(ctx context.Context) (string, error) {
	cs, _, err := c.session(ctx)
	if err != nil {
		return "", err
	}
	return cs.InitializeResult().Instructions, nil
}

// onProgress hands a progress notification to the call that asked for it
// (never blocking the connection: a full queue drops the notification).
func (c *conn) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	if ch, ok := c.progress.Load(tok); ok {
		select {
		case ch.(chan *sdk.ProgressNotificationParams) <- req.Params:
		default:
		}
	}
}

// close ends the connection for good and waits for its watcher.
func (c *conn) close() error {
	c.mu.Lock()
	c.closed = true
	cs, d := c.cs, c.d
	c.cs = nil
	c.mu.Unlock()
	var err error
	if cs != nil {
		err = cs.Close()
		d.transport.cancel()
	}
	c.waiters.Wait()
	if err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
		return err
	}
	return nil
}

// isLost reports whether err says the connection went away (as opposed
// to an answer from the server).
func isLost(err error) bool {
	var we *wireError
	return !errors.As(err, &we)
}
