package weft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/toolsets"
)

// ErrRemoteToolNotFound is matched by the error of RemoteTools when no
// worker described one of the tools asked for before the context ended.
var ErrRemoteToolNotFound = errors.New("weft: no worker serves the remote tool")

// RemoteToolsetName is the name of the toolsets RemoteTools returns.
const RemoteToolsetName = "remote_tools"

// RemoteTools returns a toolset of the tools named, served by remote tool
// workers (package worker, docs/worker-protocol.md), for an agent's
// AgentConfig.Toolsets. It asks the workers for their definitions on
// <root>.worker.describe until every name is described or ctx ends (give
// ctx a deadline), and tells the runtime's host that calls of those names
// go to the workers: the runtime records and schedules them as it does
// local calls; the workers' registries apply timeouts, internal retries
// and argument validation. Local tools are unaffected.
//
// A tool goes to the workers the way the first worker that describes it
// takes calls: from the core queue group, or, for a worker of a pool
// (worker.WithPool), through the pool's JetStream work queue, where a call
// waits for a worker with room (Config.WorkerQueueWait at most). Do not
// serve one tool both ways.
func (rt *Runtime) RemoteTools(ctx context.Context, names ...string) (toolsets.Toolset, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no tool names given", ErrRemoteToolNotFound)
	}
	defs, pools, err := describeRemote(ctx, rt.conn, rt.subj, names)
	if err != nil {
		return nil, err
	}
	tools := make([]toolsets.Tool, len(defs))
	for i, d := range defs {
		tools[i] = remoteTool{def: d}
	}
	ts, err := toolsets.New(RemoteToolsetName, tools)
	if err != nil {
		return nil, fmt.Errorf("weft: remote tools: %w", err)
	}
	for i, n := range names {
		if pools[i] == "" {
			rt.host.AddRemoteTools(n)
		} else if err := rt.host.AddPooledTools(pools[i], n); err != nil {
			return nil, fmt.Errorf("weft: remote tool %q: %w", n, err)
		}
	}
	return ts, nil
}

// DescribeRemoteTools asks the workers on nc (subject scheme rooted at
// root) for the definitions of the tools named and returns them in the
// order of names. It returns as soon as every name is described; if ctx
// ends first, the error matches ErrRemoteToolNotFound and names the
// missing tools.
func DescribeRemoteTools(ctx context.Context, nc *nats.Conn, subj bus.Subjects, names ...string) ([]toolsets.Definition, error) {
	defs, _, err := describeRemote(ctx, nc, subj, names)
	return defs, err
}

// describeRemote is DescribeRemoteTools that also returns, for each name,
// the worker pool of the worker that described it first ("" for the core
// queue group).
func describeRemote(ctx context.Context, nc *nats.Conn, subj bus.Subjects, names []string) ([]toolsets.Definition, []string, error) {
	if subj.Root() == "" {
		subj = bus.Default
	}
	inbox := nc.NewInbox()
	ch := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		return nil, nil, fmt.Errorf("weft: describe remote tools: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	found := map[string]toolsets.Definition{}
	pool := map[string]string{}
	missing := func() []string {
		var out []string
		for _, n := range names {
			if _, ok := found[n]; !ok {
				out = append(out, n)
			}
		}
		return out
	}
	ask := func() error {
		return nc.PublishRequest(actors.WorkerDescribeSubject(subj), inbox, nil)
	}
	if err := ask(); err != nil {
		return nil, nil, fmt.Errorf("weft: describe remote tools: %w", err)
	}
	// Workers that start later are asked again at a growing interval.
	retry := nats.DefaultTimeout / 8
	timer := time.NewTimer(retry)
	defer timer.Stop()
	for len(missing()) > 0 {
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("%w: %s (%v)", ErrRemoteToolNotFound, strings.Join(missing(), ", "), context.Cause(ctx))
		case <-timer.C:
			if err := ask(); err != nil {
				return nil, nil, fmt.Errorf("weft: describe remote tools: %w", err)
			}
			retry = min(2*retry, nats.DefaultTimeout)
			timer.Reset(retry)
		case m := <-ch:
			var d actors.WorkerDescription
			if err := json.Unmarshal(m.Data, &d); err != nil {
				continue // not a description (a no-responders status)
			}
			for _, def := range d.Tools {
				if _, seen := found[def.Name]; !seen && slices.Contains(names, def.Name) {
					found[def.Name], pool[def.Name] = def, d.Pool
				}
			}
		}
	}
	out := make([]toolsets.Definition, len(names))
	pools := make([]string, len(names))
	for i, n := range names {
		out[i], pools[i] = found[n], pool[n]
	}
	return out, pools, nil
}

// remoteTool stands for a tool a worker serves: it gives the model its
// definition; its calls go to the workers (actors.Host.AddRemoteTools).
type remoteTool struct{ def toolsets.Definition }

// Definition implements toolsets.Tool.
func (r remoteTool) Definition() toolsets.Definition { return r.def.Clone() }

// Call implements toolsets.Tool. The host sends the calls of a remote tool
// to its workers, so Call runs only if the tool was attached to a runtime
// other than the one RemoteTools was called on.
func (r remoteTool) Call(context.Context, *toolsets.ToolContext, json.RawMessage) (any, error) {
	return nil, fmt.Errorf("remote tool %q is not served by this runtime (use the toolset of its own Runtime.RemoteTools)", r.def.Name)
}
