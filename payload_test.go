package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// The payload tests run tools and models whose data is over NATS's 1 MiB
// max payload (2 MB) and far over it (20 MB), on memstore and on the
// embedded JetStream log: below the runtime's limit the run completes with
// the data intact (kept by reference in the blob store), above it the run
// gets the typed error. Every run is bounded: a run left running fails the
// test instead of hanging it.

// payloadWait bounds one run of a payload test.
const payloadWait = 2 * time.Minute

var payloadSizes = []int{2 << 20, 20 << 20}

type bigArgs struct {
	Bytes int `json:"bytes"`
}

// bigTool answers a string of the requested number of bytes.
func bigTool(t *testing.T) toolsets.Tool {
	t.Helper()
	tl, err := toolsets.NewFunc("big", func(ctx context.Context, a bigArgs) (string, error) {
		return strings.Repeat("x", a.Bytes), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// bigModel calls big calls times with bytes each, then answers with a text
// of answer bytes ("done" for 0); it keeps no state, so a restarted
// runtime carries on.
func bigModel(calls, bytes, answer int) llm.Model {
	return llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolReturns()) > 0 || calls == 0 {
			if answer == 0 {
				return &llm.Response{Text: "done"}, nil
			}
			return &llm.Response{Text: strings.Repeat("y", answer)}, nil
		}
		var tcs []llm.ToolCall
		for i := range calls {
			tcs = append(tcs, llm.ToolCall{ID: fmt.Sprintf("call_%d", i+1), Name: "big", Arguments: fmt.Appendf(nil, `{"bytes":%d}`, bytes)})
		}
		return &llm.Response{ToolCalls: tcs}, nil
	})
}

// payloadStores are the logs the payload tests run on.
var payloadStores = []struct {
	name string
	cfg  func(t *testing.T) weft.Config
}{
	{"memstore", func(t *testing.T) weft.Config { return weft.Config{Store: memstore.New()} }},
	{"jetstream", func(t *testing.T) weft.Config { return weft.Config{DataDir: t.TempDir()} }},
}

// runBig runs one session of an agent of model and the big tool on cfg,
// bounded by payloadWait.
func runBig(t *testing.T, cfg weft.Config, model llm.Model) (*weft.Runtime, *weft.Session, *weft.Result, error) {
	t.Helper()
	rt, err := weft.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	a, err := rt.NewAgent("big", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{bigTool(t)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), payloadWait)
	defer cancel()
	s := a.NewSession()
	res, err := s.Run(ctx, "go")
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the run did not settle within %v: %v", payloadWait, err)
	}
	return rt, s, res, err
}

// TestLargeToolResults: two results of 2 MB (20 MB) make a model request
// of 4 MB (40 MB); the run completes, the model sees both results whole,
// the log holds them by reference and verifies, and a runtime restarted on
// the same log reads them back.
func TestLargeToolResults(t *testing.T) {
	for _, st := range payloadStores {
		for _, size := range payloadSizes {
			t.Run(fmt.Sprintf("%s/%dMB", st.name, size>>20), func(t *testing.T) {
				cfg := st.cfg(t)
				var seen []int
				inner := bigModel(2, size, 0)
				model := llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
					for _, r := range req.Messages[len(req.Messages)-1].ToolReturns() {
						seen = append(seen, len(r.Content))
					}
					return inner.Request(ctx, req)
				})
				rt, s, res, err := runBig(t, cfg, model)
				if err != nil || res.Status != weft.StatusCompleted {
					t.Fatalf("run: %v, %v; want completed", res, err)
				}
				if len(seen) != 2 || seen[0] != size+2 || seen[1] != size+2 {
					t.Errorf("the model saw results of %v bytes, want two of %d", seen, size+2)
				}
				check := func(evs []events.Event) {
					t.Helper()
					if err := events.VerifyChain(evs); err != nil {
						t.Errorf("chain: %v", err)
					}
					var byRef int
					for _, ev := range evs {
						if ev.Blob != nil {
							byRef++
						}
						if _, err := events.Decode(ev); err != nil {
							t.Errorf("decode %s: %v", ev.Type, err)
						}
					}
					// Two tool.returned, the model.request of both.
					if byRef < 3 {
						t.Errorf("%d events by reference, want at least 3", byRef)
					}
				}
				check(streamEvents(t, rt, s.ID()))
				if cfg.DataDir == "" {
					return
				}
				rt.Close()
				rt2, err := weft.Start(t.Context(), weft.Config{DataDir: cfg.DataDir})
				if err != nil {
					t.Fatal(err)
				}
				defer rt2.Close()
				check(streamEvents(t, rt2, s.ID()))
			})
		}
	}
}

// TestToolResultOverLimit: a result over Config.MaxPayloadBytes returns as
// an execution error naming both sizes, and the run goes on to complete.
func TestToolResultOverLimit(t *testing.T) {
	for _, st := range payloadStores {
		for _, size := range payloadSizes {
			t.Run(fmt.Sprintf("%s/%dMB", st.name, size>>20), func(t *testing.T) {
				cfg := st.cfg(t)
				cfg.MaxPayloadBytes = size / 2
				rt, s, res, err := runBig(t, cfg, bigModel(1, size, 0))
				if err != nil || res.Status != weft.StatusCompleted {
					t.Fatalf("run: %v, %v; want completed", res, err)
				}
				var ret *toolsets.Return
				for _, ev := range streamEvents(t, rt, s.ID()) {
					if ev.Type == events.TypeToolReturned {
						r := returnOf(t, ev)
						ret = &r
					}
				}
				if ret == nil {
					t.Fatal("no tool.returned")
				}
				want := fmt.Sprintf("exceeds the limit of %d bytes", size/2)
				var msg string
				_ = json.Unmarshal(ret.Content, &msg)
				if ret.Kind != toolsets.KindExecution || !ret.IsError || !strings.Contains(msg, want) || !strings.Contains(msg, "result of ") {
					t.Errorf("return %s %q, want an execution error saying %q", ret.Kind, msg, want)
				}
			})
		}
	}
}

// TestLargeModelResponse: a final answer of 2 MB (20 MB) completes the run
// with that output; over Config.MaxPayloadBytes the run fails with a
// RunError of kind payload_too_large.
func TestLargeModelResponse(t *testing.T) {
	for _, st := range payloadStores {
		for _, size := range payloadSizes {
			t.Run(fmt.Sprintf("%s/%dMB", st.name, size>>20), func(t *testing.T) {
				t.Run("below the limit", func(t *testing.T) {
					_, _, res, err := runBig(t, st.cfg(t), bigModel(0, 0, size))
					if err != nil || res.Status != weft.StatusCompleted {
						t.Fatalf("run: %v, %v; want completed", res, err)
					}
					if len(res.Output) != size {
						t.Errorf("output of %d bytes, want %d", len(res.Output), size)
					}
				})
				t.Run("over the limit", func(t *testing.T) {
					cfg := st.cfg(t)
					cfg.MaxPayloadBytes = size / 2
					_, _, res, err := runBig(t, cfg, bigModel(0, 0, size))
					var re *weft.RunError
					if !errors.As(err, &re) || re.Kind != actors.FailPayloadTooLarge || !strings.Contains(re.Message, fmt.Sprintf("exceeds the limit of %d bytes", size/2)) {
						t.Fatalf("run: %v, %v; want a RunError of kind %s", res, err, actors.FailPayloadTooLarge)
					}
					if res == nil || res.Status != weft.StatusFailed {
						t.Errorf("result %v, want failed", res)
					}
				})
			})
		}
	}
}

type measureArgs struct {
	Data string `json:"data"`
}

// TestLargeToolArguments: arguments of 2 MB (20 MB), over the bus limit of
// the call to the node's tool actor, reach the local tool whole (by
// reference to the blob store) and it runs once.
func TestLargeToolArguments(t *testing.T) {
	for _, st := range payloadStores {
		for _, size := range payloadSizes {
			t.Run(fmt.Sprintf("%s/%dMB", st.name, size>>20), func(t *testing.T) {
				var runs int
				measure, err := toolsets.NewFunc("measure", func(ctx context.Context, a measureArgs) (int, error) {
					runs++
					return len(a.Data), nil
				})
				if err != nil {
					t.Fatal(err)
				}
				args, _ := json.Marshal(measureArgs{Data: strings.Repeat("d", size)})
				model := llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
					if len(req.Messages[len(req.Messages)-1].ToolReturns()) > 0 {
						return &llm.Response{Text: "done"}, nil
					}
					return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "measure", Arguments: args}}}, nil
				})
				rt, err := weft.Start(t.Context(), st.cfg(t))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { rt.Close() })
				a, err := rt.NewAgent("measure", weft.AgentConfig{Model: model, Tools: []toolsets.Tool{measure}})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), payloadWait)
				defer cancel()
				s := a.NewSession()
				res, err := s.Run(ctx, "go")
				if err != nil || res.Status != weft.StatusCompleted {
					t.Fatalf("run: %v, %v; want completed", res, err)
				}
				var got toolsets.Return
				for _, ev := range streamEvents(t, rt, s.ID()) {
					if ev.Type == events.TypeToolReturned {
						got = returnOf(t, ev)
					}
				}
				if got.IsError || string(got.Content) != fmt.Sprint(size) || runs != 1 {
					t.Errorf("return %s %s, ran %d times; want %d from one run", got.Kind, got.Content, runs, size)
				}
			})
		}
	}
}

// TestStoreLimitBelowCap: on a log that keeps at most 1 MiB of data per
// event (as EventStoreDB does by default), a result over it is a tool
// error naming the store's limit, and two results of 600 KB, each under
// it, whose model request (1.2 MB) the store refuses, fail the run with
// payload_too_large instead of leaving it running (the hang the issue
// reproduced, again after every restart).
func TestStoreLimitBelowCap(t *testing.T) {
	const storeMax = 1 << 20
	cfg := func() weft.Config { return weft.Config{Store: memstore.New(memstore.WithMaxDataBytes(storeMax))} }
	t.Run("one result over the store's limit", func(t *testing.T) {
		rt, s, res, err := runBig(t, cfg(), bigModel(1, 2<<20, 0))
		if err != nil || res.Status != weft.StatusCompleted {
			t.Fatalf("run: %v, %v; want completed", res, err)
		}
		var got toolsets.Return
		for _, ev := range streamEvents(t, rt, s.ID()) {
			if ev.Type == events.TypeToolReturned {
				got = returnOf(t, ev)
			}
		}
		want := fmt.Sprintf("exceeds the limit of %d bytes", storeMax-4096)
		if got.Kind != toolsets.KindExecution || !strings.Contains(got.Control.Message, want) {
			t.Errorf("return %s %+v, want an execution error saying %q", got.Kind, got.Control, want)
		}
	})
	t.Run("a model request over the store's limit", func(t *testing.T) {
		_, _, res, err := runBig(t, cfg(), bigModel(2, 600<<10, 0))
		var re *weft.RunError
		if !errors.As(err, &re) || re.Kind != actors.FailPayloadTooLarge || !strings.Contains(re.Message, "model.request") {
			t.Fatalf("run: %v, %v; want a RunError of kind %s about the model request", res, err, actors.FailPayloadTooLarge)
		}
	})
}
