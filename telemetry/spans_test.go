package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/telemetry"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/nats-io/nats-server/v2/server.(*Server).startGoRoutine.func1"),
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.(*ActorSystem).Shutdown"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewActorSystemWithConfig.func1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.(*DeadLetterProcess).init.func2"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

// setup starts a runtime on a memstore whose observer is a Telemetry
// exporting into an in-memory exporter.
func setup(t *testing.T, cfg telemetry.Config) (*weft.Runtime, *telemetry.Telemetry, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	store := memstore.New()
	cfg.SpanExporters, cfg.Syncer, cfg.Store, cfg.Backend = append(cfg.SpanExporters, exp), true, store, "memstore"
	tel, err := telemetry.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	rt, err := weft.Start(t.Context(), weft.Config{Store: store, Observer: tel})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, tel, exp
}

func newTool(t *testing.T, name string, fn func(context.Context, *toolsets.ToolContext, struct{}) (any, error), opts ...toolsets.Option) toolsets.Tool {
	t.Helper()
	tl, err := toolsets.NewContextFunc(name, fn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func agent(t *testing.T, rt *weft.Runtime, name string, cfg weft.AgentConfig) *weft.Agent {
	t.Helper()
	a, err := rt.NewAgent(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func run(t *testing.T, s *weft.Session, want weft.Status) *weft.Result {
	t.Helper()
	res, err := s.Run(t.Context(), "go")
	if err != nil || res.Status != want {
		t.Fatalf("Run = %+v, %v; want %s", res, err, want)
	}
	return res
}

func TestSpanTrees(t *testing.T) {
	ok := func(context.Context, *toolsets.ToolContext, struct{}) (any, error) { return "ok", nil }
	tests := []struct {
		name string
		run  func(t *testing.T, rt *weft.Runtime, tel *telemetry.Telemetry)
	}{
		{"parallel_tools", func(t *testing.T, rt *weft.Runtime, _ *telemetry.Telemetry) {
			model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "alpha", `{}`), call("c2", "beta", `{}`)), llm.ScriptText("done"))
			a := agent(t, rt, "parallel", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{newTool(t, "alpha", ok), newTool(t, "beta", ok)}})
			run(t, a.NewSession(), weft.StatusCompleted)
		}},
		{"retried_tool", func(t *testing.T, rt *weft.Runtime, _ *telemetry.Telemetry) {
			var tries atomic.Int32
			flaky := newTool(t, "flaky", func(context.Context, *toolsets.ToolContext, struct{}) (any, error) {
				if tries.Add(1) < 3 {
					return nil, errors.New("transient failure")
				}
				return "ok", nil
			}, toolsets.WithMaxRetries(2))
			model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "flaky", `{}`)), llm.ScriptText("done"))
			run(t, agent(t, rt, "retrying", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{flaky}}).NewSession(), weft.StatusCompleted)
		}},
		{"approval_wait_resume", func(t *testing.T, rt *weft.Runtime, _ *telemetry.Telemetry) {
			deploy := newTool(t, "deploy", func(_ context.Context, tc *toolsets.ToolContext, _ struct{}) (any, error) {
				if tc.Approval == nil {
					return nil, toolsets.ApprovalRequired("deploy production", nil)
				}
				return "deployed", nil
			})
			model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "deploy", `{}`)), llm.ScriptText("done"))
			s := agent(t, rt, "deployer", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{deploy}}).NewSession()
			run(t, s, weft.StatusWaiting)
			res, err := s.Resume(t.Context(), weft.Approve("c1", "ana", nil))
			if err != nil || res.Status != weft.StatusCompleted {
				t.Fatalf("Resume = %+v, %v", res, err)
			}
		}},
		{"remote_worker", func(t *testing.T, rt *weft.Runtime, tel *telemetry.Telemetry) {
			w, err := worker.New(rt.Conn(), []toolsets.Tool{newTool(t, "lookup", ok)}, worker.WithTracerProvider(tel.TracerProvider()))
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- w.Serve(ctx) }()
			t.Cleanup(func() { stop(); <-done })
			ts, err := rt.RemoteTools(t.Context(), "lookup")
			if err != nil {
				t.Fatal(err)
			}
			model := llm.NewScripted(llm.ScriptToolCalls(call("c1", "lookup", `{}`)), llm.ScriptText("done"))
			run(t, agent(t, rt, "remote", weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}}).NewSession(), weft.StatusCompleted)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt, tel, exp := setup(t, telemetry.Config{})
			tc.run(t, rt, tel)
			checkGolden(t, tc.name, tree(exp.GetSpans()))
			for _, s := range exp.GetSpans() {
				for _, kv := range s.Attributes {
					if kv.Key == "gen_ai.tool.call.arguments" || kv.Key == "gen_ai.tool.call.result" {
						t.Errorf("span %s records %s without RecordContent", s.Name, kv.Key)
					}
				}
			}
		})
	}
}
