package worker_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// TestAmbiguousArgumentsStayOnTheNode: a call of a remote tool whose
// arguments name a member twice never reaches a worker (one in another
// language could decode either value): the node answers invalid_arguments,
// and the model is asked again.
func TestAmbiguousArgumentsStayOnTheNode(t *testing.T) {
	rt, url := node(t)
	nc, subject := rawWorker(t, url, "deployer", toolsets.Definition{Name: "deploy", Description: "deploys",
		Parameters: json.RawMessage(`{"type":"object","properties":{"environment":{"type":"string"}}}`)})
	var mu sync.Mutex
	var delivered []string
	if _, err := nc.Subscribe(subject, func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		delivered = append(delivered, string(m.Data))
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ts, err := rt.RemoteTools(t.Context(), "deploy")
	if err != nil {
		t.Fatal(err)
	}
	var turns atomic.Int32
	model := llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		if turns.Add(1) == 1 {
			return &llm.Response{ToolCalls: []llm.ToolCall{call("c1", "deploy", `{"environment":"staging","environment":"production"}`)}}, nil
		}
		return &llm.Response{Text: "done"}, nil // asked again after the refusal
	})
	a, err := rt.NewAgent(t.Name(), weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}})
	if err != nil {
		t.Fatal(err)
	}
	s := a.NewSession()
	res, err := s.Run(t.Context(), "deploy")
	if err != nil {
		t.Fatal(err)
	}
	r := returns(t, s, res.RunID)["c1"]
	if r.Kind != toolsets.KindInvalidArguments || r.Control == nil || r.Control.Field != "environment" {
		t.Errorf("return %s %+v, want invalid_arguments for environment", r.Kind, r.Control)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(delivered) != 0 {
		t.Errorf("the call reached a worker: %q", delivered)
	}
}
