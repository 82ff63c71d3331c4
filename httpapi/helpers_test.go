package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/httpapi"
	"github.com/weft-run/weft/internal/logtest"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
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

// The tokens of the tests: one principal per role, and a hashed entry.
const (
	viewerToken   = "viewer-token-0123456789"
	operatorToken = "operator-token-0123456789"
	approverToken = "approver-token-0123456789"
	hashedToken   = "hashed-token-0123456789"
)

func testTokens(t testing.TB) *httpapi.Tokens {
	t.Helper()
	list := "# test tokens\nvera viewer " + viewerToken + "\noscar operator " + operatorToken + "\n" +
		"ana approver " + approverToken + "\nhank operator,approver " + httpapi.HashToken(hashedToken) + "\n"
	tok, err := httpapi.ParseTokens(strings.NewReader(list), "test")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// deployModel asks for deploy {"env":"prod"} until the request holds a
// tool return, then answers "deployed".
func deployModel() llm.Model {
	return llm.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if n := len(req.Messages); n > 0 {
			for _, p := range req.Messages[n-1].Parts {
				if p.Kind() == llm.KindToolReturn {
					return &llm.Response{Text: "deployed"}, nil
				}
			}
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "call-1", Name: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`)}}}, nil
	})
}

// streamer streams the answers of a model: each text in pieces of 3
// bytes, each tool call's arguments in two fragments, then the whole
// response.
type streamer struct{ llm.Model }

func (s streamer) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		resp, err := s.Request(ctx, req)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		for text := resp.Text; text != ""; {
			n := min(3, len(text))
			if !yield(llm.StreamEvent{TextDelta: text[:n]}, nil) {
				return
			}
			text = text[n:]
		}
		for i, c := range resp.ToolCalls {
			args := string(c.Arguments)
			half := len(args) / 2
			if !yield(llm.StreamEvent{ToolCalls: []llm.ToolCallDelta{{Index: i, ID: c.ID, Name: c.Name, ArgumentsDelta: args[:half]}}}, nil) ||
				!yield(llm.StreamEvent{ToolCalls: []llm.ToolCallDelta{{Index: i, ArgumentsDelta: args[half:]}}}, nil) {
				return
			}
		}
		yield(llm.StreamEvent{Response: resp}, nil)
	}
}

type envArgs struct {
	Env string `json:"env"`
}

// fixture is an API over a runtime on memstore with the agent "ops",
// whose deploy tool needs approval (unless open).
type fixture struct {
	rt   *weft.Runtime
	api  *httpapi.API
	srv  *httptest.Server
	logs *logtest.Buffer
}

type fixtureOptions struct {
	noTokens bool
	noAgents bool
	noGate   bool
	stream   bool
	cors     []string
	// progress makes deploy emit that many progress events first.
	progress int
	// progressEvery paces the progress events.
	progressEvery time.Duration
	// elicit makes deploy ask a person which environment to deploy to.
	elicit bool
	// reload is Config.Reload.
	reload func(ctx context.Context) (any, error)
	// store wraps the runtime's store.
	store func(events.Store) events.Store
}

func newFixture(t testing.TB, o fixtureOptions) *fixture {
	t.Helper()
	var store events.Store = memstore.New()
	if o.store != nil {
		store = o.store(store)
	}
	rt, err := weft.Start(t.Context(), weft.Config{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	deploy, err := toolsets.NewContextFunc("deploy", func(_ context.Context, tc *toolsets.ToolContext, a envArgs) (string, error) {
		if o.elicit {
			if tc.Elicitation == nil {
				return "", toolsets.ElicitationRequired("Which environment?", json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`), nil)
			}
			if tc.Elicitation.Action != toolsets.ElicitAccept {
				return "not deployed: " + tc.Elicitation.Action, nil
			}
			if err := json.Unmarshal(tc.Elicitation.Content, &a); err != nil {
				return "", err
			}
		}
		for i := range o.progress {
			time.Sleep(o.progressEvery)
			if err := tc.Emit("step", i); err != nil {
				return "", err
			}
		}
		return "deployed to " + a.Env, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpapi.Config{}
	if !o.noAgents {
		acfg := weft.AgentConfig{Model: deployModel(), Tools: []toolsets.Tool{deploy}}
		if o.stream {
			acfg.Model = streamer{acfg.Model}
		}
		if !o.noGate {
			acfg.ApprovalRequiredTools = []string{"deploy"}
		}
		ag, err := rt.NewAgent("ops", acfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Agents = []*weft.Agent{ag}
	}
	if !o.noTokens {
		cfg.Tokens = testTokens(t)
	}
	f := &fixture{rt: rt, logs: &logtest.Buffer{}}
	cfg.Logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.CORSOrigins = o.cors
	cfg.Reload = o.reload
	if f.api, err = httpapi.New(rt, cfg); err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(f.api)
	t.Cleanup(func() {
		f.api.Close()
		f.srv.Close()
	})
	return f
}

// do sends a request with token (none when empty) and body (JSON when not
// a string) and returns the status and the body.
func (f *fixture) do(t testing.TB, method, path, token string, body any, hdr ...string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// decode decodes b into a T, failing the test.
func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

type runRef struct {
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
}

type runView struct {
	Status  string `json:"status"`
	Output  string `json:"output"`
	Pending []struct {
		ID string `json:"id"`
	} `json:"pending"`
}

// start starts a run of prompt as the operator and returns its ids.
func (f *fixture) start(t testing.TB, prompt string, hdr ...string) runRef {
	t.Helper()
	code, b := f.do(t, "POST", "/v1/runs", operatorToken, map[string]any{"prompt": prompt}, hdr...)
	if code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, b)
	}
	return decode[runRef](t, b)
}

// wait waits for the run to settle and returns it.
func (f *fixture) wait(t testing.TB, ref runRef) runView {
	t.Helper()
	code, b := f.do(t, "GET", "/v1/sessions/"+ref.SessionID+"/runs/"+ref.RunID+"?wait=30s", viewerToken, nil)
	if code != http.StatusOK {
		t.Fatalf("get run: %d %s", code, b)
	}
	return decode[runView](t, b)
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	ID    uint64
	Event string
	Data  string
}

// sseStream reads an event stream.
type sseStream struct {
	resp *http.Response
	rd   *bufio.Reader
}

func (f *fixture) stream(t testing.TB, path, token string, hdr ...string) *sseStream {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("stream %s: %d %s", path, resp.StatusCode, b)
	}
	s := &sseStream{resp: resp, rd: bufio.NewReader(resp.Body)}
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() { _ = s.resp.Body.Close() }

// next returns the next event (comments skipped).
func (s *sseStream) next(t testing.TB) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			t.Fatalf("read the stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev.Data != "" {
				return ev
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			ev.ID, err = strconv.ParseUint(strings.TrimPrefix(line, "id: "), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(line, "event: "):
			ev.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("not an SSE line: %q", line)
		}
	}
}

// envelope is what the tests read of an event's data.
type envelope struct {
	Type     string          `json:"type"`
	Position uint64          `json:"position"`
	Version  uint64          `json:"version"`
	RunID    string          `json:"run_id"`
	Data     json.RawMessage `json:"data"`
}
