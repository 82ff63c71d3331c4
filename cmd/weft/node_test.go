package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/events/storetest"
)

// A node's start-up reads the whole log once: the recovery of sub-runs
// (with an agents file that declares agent tools) and the count of the
// waiting sessions it reports fold from Recover's read.
func TestStartNodeReadsTheLogOnce(t *testing.T) {
	model := "    model: {name: 'openai-compatible:m', base_url: 'http://127.0.0.1:1/v1'}\n"
	for name, spec := range map[string]string{
		"demo":        "",
		"agent tools": "version: 1\nagents:\n  - name: planner\n" + model + "    agent_tools: [researcher]\n  - name: researcher\n" + model,
	} {
		t.Run(name, func(t *testing.T) {
			var agents string
			if spec != "" {
				agents = filepath.Join(t.TempDir(), "agents.yaml")
				if err := os.WriteFile(agents, []byte(spec), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			store := memstore.New()
			t.Cleanup(func() { store.Close() })
			n, err := startNode(t.Context(), nodeConfig{store: store, agentsFile: agents})
			if err != nil {
				t.Fatal(err)
			}
			sess, _ := demoWaiting(t, n)
			if err := n.close(); err != nil {
				t.Fatal(err)
			}

			counted := &storetest.ReadCounter{Store: store}
			if n, err = startNode(t.Context(), nodeConfig{store: counted, agentsFile: agents}); err != nil {
				t.Fatal(err)
			}
			defer n.close()
			if got := counted.Reads(); got != 1 {
				t.Errorf("start-up read the whole log %d times, want 1", got)
			}
			if !slices.Equal(n.waiting, []string{sess.ID()}) {
				t.Errorf("waiting at start: %v, want the demo's session %s", n.waiting, sess.ID())
			}
		})
	}
}
