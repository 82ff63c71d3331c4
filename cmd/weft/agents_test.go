package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/agentspec"
	"github.com/weft-run/weft/toolsets"
)

// serve --agents' registration: the file's agents run on the node, the
// report line names each with its model and version, and a bad file's
// error names its line.
func TestRegisterAgents(t *testing.T) {
	hs := httptest.NewServer(&chatServer{})
	defer hs.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "agents.yaml")
	spec := fmt.Sprintf("version: 1\nagents:\n  - name: tickets\n    model: {name: 'openai-compatible:test-model', base_url: '%s/v1'}\n    approval_required: [deploy]\n", hs.URL)
	if err := os.WriteFile(path, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := weft.Start(t.Context(), weft.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	demo, err := demoAgentConfig()
	if err != nil {
		t.Fatal(err)
	}
	f, h, err := registerAgents(t.Context(), rt, path, map[string][]toolsets.Tool{"tickets": demo.Tools})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var out bytes.Buffer
	printAgents(&out, f)
	want := fmt.Sprintf("agents:    tickets (openai-compatible:test-model, %s) (from %s)\n", f.AgentVersion("tickets"), path)
	if out.String() != want || strings.Join(agentNames(f), ",") != "tickets" {
		t.Errorf("printAgents = %q, want %q", out.String(), want)
	}
	// The demo's tools, added by name: the deploy waits for its approval.
	res, err := h.Agent("tickets").Session("s-1").Run(t.Context(), "Fix ticket T-7.")
	if err != nil || res.Status != weft.StatusWaiting || len(res.Pending.Approvals) != 1 || res.Pending.Approvals[0].Tool != "deploy" {
		t.Errorf("a run of the declared agent: %v, %+v; want waiting for the deploy's approval", err, res)
	}

	if err := os.WriteFile(path, []byte(spec+"    colour: blue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = registerAgents(t.Context(), rt, path, nil)
	var se *agentspec.Error
	if !errors.As(err, &se) || se.Line != 6 || se.Field != "agents[0].colour" {
		t.Errorf("registerAgents of a bad file = %v, want an error at line 6, agents[0].colour", err)
	}
}
