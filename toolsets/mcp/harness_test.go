package mcp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/weft-run/weft/toolsets"
)

// harness drives a toolset as the runtime does: a Lifecycle per toolset,
// prepared per step, and a registry per step that runs the calls.
type harness struct {
	t   *testing.T
	lc  *toolsets.Lifecycle
	tc  *toolsets.ToolsetContext
	reg *toolsets.Registry
	// Prep and Report are the last preparation's.
	Prep   toolsets.Preparation
	Report toolsets.LifecycleReport
	Err    error

	regOpts []toolsets.RegistryOption

	mu       sync.Mutex
	progress []toolsets.Progress
}

// start prepares ts for a new run and exits the run at cleanup. Its
// registries have a default timeout of 20s.
func start(t *testing.T, ts toolsets.Toolset) *harness {
	t.Helper()
	return startRun(t, ts, "run-"+t.Name(), toolsets.WithDefaultTimeout(20*time.Second))
}

// startRun is start for run runID, with registries built with opts.
func startRun(t *testing.T, ts toolsets.Toolset, runID string, opts ...toolsets.RegistryOption) *harness {
	t.Helper()
	h := &harness{t: t, lc: toolsets.NewLifecycle(ts), tc: &toolsets.ToolsetContext{RunID: runID, SessionID: "s"}, regOpts: opts}
	t.Cleanup(func() {
		_, _ = h.lc.Exit(context.Background(), h.tc)
		h.lc.Wait()
	})
	h.step()
	return h
}

// step prepares the next step and builds its registry.
func (h *harness) step() {
	h.t.Helper()
	h.Prep, h.Report, h.Err = h.lc.Prepare(h.t.Context(), h.tc)
	h.reg = toolsets.NewRegistry(h.regOpts...)
	if h.Err != nil || len(h.Prep.Tools) == 0 {
		return
	}
	info := h.lc.Toolset().Info()
	var opts []toolsets.Option
	if info.Timeout > 0 {
		opts = append(opts, toolsets.WithTimeout(info.Timeout))
	}
	st, err := toolsets.New(info.Name, h.Prep.Tools, opts...)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.reg.AddToolset(h.t.Context(), st); err != nil {
		h.t.Fatal(err)
	}
}

// mustReady fails the test unless the last preparation succeeded.
func (h *harness) mustReady() {
	h.t.Helper()
	if h.Err != nil || h.Report.State == toolsets.StateUnavailable || h.Report.State == toolsets.StateFailed {
		h.t.Fatalf("prepare: %v (report %+v)", h.Err, h.Report)
	}
}

func (h *harness) def(name string) toolsets.Definition {
	h.t.Helper()
	d, ok := h.reg.Lookup(name)
	if !ok {
		h.t.Fatalf("no tool %q; have %v", name, h.names())
	}
	return d
}

func (h *harness) names() []string {
	var out []string
	for _, t := range h.Prep.Tools {
		out = append(out, t.Definition().Name)
	}
	return out
}

// call runs one call; approved gives it an approval.
func (h *harness) call(ctx context.Context, id, name, args string, approved bool) toolsets.Return {
	inv := toolsets.Invocation{CallID: id, Name: name, Arguments: json.RawMessage(args), RunID: h.tc.RunID, SessionID: h.tc.SessionID,
		Emitter: toolsets.EmitterFunc(func(p toolsets.Progress) {
			h.mu.Lock()
			h.progress = append(h.progress, p)
			h.mu.Unlock()
		})}
	if approved {
		inv.Approval = &toolsets.Approval{DecidedBy: "test"}
	}
	return h.reg.Call(ctx, inv)
}

func (h *harness) progressOf(callID string) []toolsets.Progress {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []toolsets.Progress
	for _, p := range h.progress {
		if p.CallID == callID {
			out = append(out, p)
		}
	}
	return out
}

// content decodes a return's content as a string (or its JSON text).
func content(r toolsets.Return) string {
	var s string
	if json.Unmarshal(r.Content, &s) == nil {
		return s
	}
	return string(r.Content)
}

// eventually waits, bounded, until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// RunID is the harness run's id.
func (h *harness) RunID() string { return h.tc.RunID }
