package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/agentspec"
	"github.com/weft-run/weft/toolsets"
)

// registerAgents loads the spec file at path and registers its agents on
// rt, for serve --agents FILE: call it once the runtime has started and
// before Recover, since a restarted node registers the agents whose
// sessions it carries on (several nodes given the same file share the
// work as with the demo agent). extra adds Go tools to declared agents by
// name. The caller closes the hosted agents after the runtime. Errors
// name the file, line and field (*agentspec.Error).
func registerAgents(ctx context.Context, rt *weft.Runtime, path string, extra map[string][]toolsets.Tool) (*agentspec.File, *agentspec.Hosted, error) {
	f, err := agentspec.Load(path)
	if err != nil {
		return nil, nil, err
	}
	h, err := f.Register(ctx, rt, extra)
	if err != nil {
		return nil, nil, err
	}
	return f, h, nil
}

// agentNames are the names of the file's agents, in its order (serve's
// report lists them).
func agentNames(f *agentspec.File) []string {
	names := make([]string, len(f.Agents))
	for i, a := range f.Agents {
		names[i] = a.Name
	}
	return names
}

// printAgents writes serve's "agents:" line for a spec file: each agent
// with its model and version.
func printAgents(w io.Writer, f *agentspec.File) {
	parts := make([]string, len(f.Agents))
	for i, a := range f.Agents {
		parts[i] = fmt.Sprintf("%s (%s, %s)", a.Name, a.Model.Name, f.AgentVersion(a.Name))
	}
	fmt.Fprintf(w, "agents:    %s (from %s)\n", strings.Join(parts, ", "), f.Name())
}
