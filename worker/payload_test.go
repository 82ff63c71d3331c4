package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/worker"
)

// The payload tests send results and arguments over NATS's 1 MiB max
// payload (2 MB) and far over it (20 MB) between a node and a worker
// process: on a node whose log is JetStream the worker shares its blob
// bucket and the data goes by reference; on a node on memstore the worker
// has no blob store it can reach and reports the problem. Either way the
// call returns once, the tool runs once, and the run settles within
// payloadWait.

const payloadWait = 2 * time.Minute

var payloadSizes = []int{2 << 20, 20 << 20}

type sizeArgs struct {
	Bytes int    `json:"bytes,omitempty"`
	Data  string `json:"data,omitempty"`
}

// payloadTools are "big", which answers a string of the requested number
// of bytes, and "measure", which answers the length of its data; runs
// counts their executions.
func payloadTools(t *testing.T, runs *atomic.Int32) []toolsets.Tool {
	t.Helper()
	big, err := toolsets.NewFunc("big", func(ctx context.Context, a sizeArgs) (string, error) {
		runs.Add(1)
		return strings.Repeat("x", a.Bytes), nil
	}, toolsets.WithDescription("answers that many bytes"))
	if err != nil {
		t.Fatal(err)
	}
	measure, err := toolsets.NewFunc("measure", func(ctx context.Context, a sizeArgs) (int, error) {
		runs.Add(1)
		return len(a.Data), nil
	}, toolsets.WithDescription("measures its data"))
	if err != nil {
		t.Fatal(err)
	}
	return []toolsets.Tool{big, measure}
}

// payloadNode starts a NATS server and a runtime on it, its log on the
// server's JetStream (shared) or on memstore (not shared).
func payloadNode(t *testing.T, shared bool, cfg weft.Config) (*weft.Runtime, string) {
	t.Helper()
	if !shared {
		return nodeWith(t, cfg)
	}
	srv, err := bus.StartServer(bus.ServerConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	cfg.NATSURL = srv.ClientURL()
	rt, err := weft.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt, srv.ClientURL()
}

// runPayload runs one session calling tool once with args, then answering
// "done"; it returns the call's return and the tool results the model saw.
func runPayload(t *testing.T, rt *weft.Runtime, tool, args string) (toolsets.Return, []llm.ToolReturn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), payloadWait)
	defer cancel()
	ts, err := rt.RemoteTools(ctx, tool)
	if err != nil {
		t.Fatal(err)
	}
	var seen []llm.ToolReturn
	model := llm.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if rs := req.Messages[len(req.Messages)-1].ToolReturns(); len(rs) > 0 {
			seen = rs
			return &llm.Response{Text: "done"}, nil
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "c1", Name: tool, Arguments: []byte(args)}}}, nil
	})
	a, err := rt.NewAgent(t.Name(), weft.AgentConfig{Model: model, Toolsets: []toolsets.Toolset{ts}})
	if err != nil {
		t.Fatal(err)
	}
	s := a.NewSession()
	res, err := s.Run(ctx, "go")
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the run did not settle within %v", payloadWait)
	}
	if err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("run: %v, %v; want completed", res, err)
	}
	ret, ok := returns(t, s, res.RunID)["c1"]
	if !ok {
		t.Fatal("no return of c1")
	}
	if n := countReturned(t, s, res.RunID); n != 1 {
		t.Errorf("%d tool.returned, want 1", n)
	}
	return ret, seen
}

// errorText is the message of an error return.
func errorText(r toolsets.Return) string {
	var s string
	_ = json.Unmarshal(r.Content, &s)
	return s
}

// TestRemoteLargeResult: a worker's result of 2 MB (20 MB) reaches the
// model whole through the shared blob bucket; without one, the worker
// reports that it is too large for the bus. The tool runs once: the node
// never sends the call again because its result did not fit.
func TestRemoteLargeResult(t *testing.T) {
	for _, shared := range []bool{true, false} {
		for _, size := range payloadSizes {
			t.Run(fmt.Sprintf("shared=%v/%dMB", shared, size>>20), func(t *testing.T) {
				rt, url := payloadNode(t, shared, weft.Config{})
				var runs atomic.Int32
				serveInProcess(t, url, payloadTools(t, &runs))
				ret, seen := runPayload(t, rt, "big", fmt.Sprintf(`{"bytes":%d}`, size))
				if n := runs.Load(); n != 1 {
					t.Errorf("the tool ran %d times, want once", n)
				}
				if shared {
					if ret.IsError || len(seen) != 1 || len(seen[0].Content) != size+2 {
						t.Errorf("return %s %q…; the model saw %d results; want a success of %d bytes", ret.Kind, errorText(ret), len(seen), size+2)
					}
					return
				}
				want := "bytes exceeds the bus limit of"
				if ret.Kind != toolsets.KindExecution || !strings.Contains(errorText(ret), want) || !strings.Contains(errorText(ret), "result of ") {
					t.Errorf("return %s %q, want an execution error saying %q", ret.Kind, errorText(ret), want)
				}
			})
		}
	}
}

// TestRemoteResultOverLimit: over the node's payload limit a result
// returns as an execution error naming the limit, whichever side applies
// it (the node after reading the blob, or a worker with a lower limit
// before storing it).
func TestRemoteResultOverLimit(t *testing.T) {
	for _, size := range payloadSizes {
		for _, side := range []string{"node", "worker"} {
			t.Run(fmt.Sprintf("%s/%dMB", side, size>>20), func(t *testing.T) {
				var cfg weft.Config
				var opts []worker.Option
				if side == "node" {
					cfg.MaxPayloadBytes = size / 2
				} else {
					opts = append(opts, worker.WithMaxPayloadBytes(size/2))
				}
				rt, url := payloadNode(t, true, cfg)
				var runs atomic.Int32
				serveInProcess(t, url, payloadTools(t, &runs), opts...)
				ret, _ := runPayload(t, rt, "big", fmt.Sprintf(`{"bytes":%d}`, size))
				want := fmt.Sprintf("bytes exceeds the limit of %d bytes", size/2)
				if ret.Kind != toolsets.KindExecution || !strings.Contains(errorText(ret), want) {
					t.Errorf("return %s %q, want an execution error saying %q", ret.Kind, errorText(ret), want)
				}
				if n := runs.Load(); n != 1 {
					t.Errorf("the tool ran %d times, want once", n)
				}
			})
		}
	}
}

// TestRemoteLargeArguments: arguments of 2 MB (20 MB) reach the worker's
// tool whole through the shared blob bucket; a worker that cannot read the
// node's blob store returns an execution error without running the tool.
func TestRemoteLargeArguments(t *testing.T) {
	for _, shared := range []bool{true, false} {
		for _, size := range payloadSizes {
			t.Run(fmt.Sprintf("shared=%v/%dMB", shared, size>>20), func(t *testing.T) {
				rt, url := payloadNode(t, shared, weft.Config{})
				var runs atomic.Int32
				serveInProcess(t, url, payloadTools(t, &runs))
				args, _ := json.Marshal(sizeArgs{Data: strings.Repeat("d", size)})
				ret, _ := runPayload(t, rt, "measure", string(args))
				if shared {
					if ret.IsError || string(ret.Content) != fmt.Sprint(size) || runs.Load() != 1 {
						t.Errorf("return %s %s (ran %d times), want %d from one run", ret.Kind, ret.Content, runs.Load(), size)
					}
					return
				}
				if ret.Kind != toolsets.KindExecution || !strings.Contains(errorText(ret), "blob store") {
					t.Errorf("return %s %q, want an execution error about the blob store", ret.Kind, errorText(ret))
				}
				if n := runs.Load(); n != 0 {
					t.Errorf("the tool ran %d times with arguments it could not read, want never", n)
				}
			})
		}
	}
}
