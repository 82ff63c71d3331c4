package weft_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// whereModel calls the where tool once, then answers with its return.
func whereModel() llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		msgs := req.Messages
		if n := len(msgs); n > 0 && len(msgs[n-1].ToolReturns()) > 0 {
			return &llm.Response{Text: "found"}, nil
		}
		// Every run uses the same call id, as the demo model does.
		return &llm.Response{ToolCalls: []llm.ToolCall{call("call_1", "where", `{}`)}}, nil
	})
}

// TestClusterLocalTools runs sessions on two nodes of one NATS, whose
// agents have a local tool: each call runs on the node that drives the
// session (the one that prepared the run), whichever node the commands
// reach, so every call succeeds and names the session's owner.
func TestClusterLocalTools(t *testing.T) {
	url := listeningServer(t)
	nodes := []string{"node-a", "node-b"}
	rts := map[string]*weft.Runtime{}
	agents := map[string]*weft.Agent{}
	for _, node := range nodes {
		rt, err := weft.Start(t.Context(), weft.Config{NATSURL: url, NodeID: node, LeaseTTL: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		where := tool(t, "where", func(context.Context, *toolsets.ToolContext, noArgs) (any, error) {
			return node, nil
		})
		a, err := rt.NewAgent("finder", weft.AgentConfig{Model: whereModel(), Tools: []toolsets.Tool{where}})
		if err != nil {
			t.Fatal(err)
		}
		rts[node], agents[node] = rt, a
	}
	// Commands are served in a queue group: run sessions (started through
	// both nodes) until each node has driven a few, so that calls sent on
	// a shared tool subject would have reached the wrong node.
	const want, most = 3, 40
	driven := map[string]int{}
	for i := 0; driven[nodes[0]] < want || driven[nodes[1]] < want; i++ {
		if i == most {
			t.Fatalf("after %d sessions the nodes drove %v, want %d each", most, driven, want)
		}
		via := nodes[i%2]
		s := agents[via].NewSession()
		// RunStream follows the run on the event subjects, whichever
		// node drives it (Run does too: TestClusterRunThroughOtherNode).
		var last events.Event
		for ev, err := range s.RunStream(t.Context(), "where?") {
			if err != nil {
				t.Fatal(err)
			}
			last = ev
		}
		if last.Type != events.TypeRunCompleted {
			t.Fatalf("session %d (via %s) ended with %s", i, via, last.Type)
		}
		owner, err := rts[via].SessionOwner(t.Context(), s.ID())
		if err != nil {
			t.Fatal(err)
		}
		ret := toolReturn(t, s, last.RunID, "call_1")
		if ret.Kind != toolsets.KindSuccess || string(ret.Content) != fmt.Sprintf("%q", owner) {
			t.Fatalf("session %d (via %s, owned by %s): return %s %s, want a success from its owner", i, via, owner, ret.Kind, ret.Content)
		}
		driven[owner]++
	}
}

// toolReturn gives the tool.returned return of call callID in run runID.
func toolReturn(t *testing.T, s *weft.Session, runID, callID string) toolsets.Return {
	t.Helper()
	evs, err := s.Events(t.Context(), runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type != events.TypeToolReturned || ev.ToolCallID != callID {
			continue
		}
		var d events.ToolReturned
		var r toolsets.Return
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(d.Return, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Fatalf("no tool.returned of %s in run %s", callID, runID)
	return toolsets.Return{}
}
