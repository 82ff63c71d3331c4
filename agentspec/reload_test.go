package agentspec_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	weft "github.com/weft-run/weft"
	"github.com/weft-run/weft/agentspec"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// versionServer is an OpenAI-compatible server that calls fetch_ticket,
// then, once the tool's result is in the conversation, answers with its
// own name; it counts its requests.
func versionServer(t *testing.T, name string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		msg := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"fetch_ticket","arguments":"{\"ticket_id\":\"T-7\"}"}}]}`
		finish := "tool_calls"
		if strings.Contains(string(body), `"role":"tool"`) {
			msg, finish = fmt.Sprintf(`{"role":"assistant","content":"answered by %s"}`, name), "stop"
		}
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, msg, finish)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func reloadSpec(url, instructions, more string) string {
	return fmt.Sprintf(`version: 1
agents:
  - name: support
    model:
      name: openai-compatible:m
      base_url: %s/v1
      stream: false
    instructions: [%s]
    approval_required: [fetch_ticket]
%s`, url, instructions, more)
}

// A reload registers the changed agents as new versions: a run waiting
// under v1 finishes on v1's model after the reload while a new run starts
// on v2's, each recording its version; a file that fails midway changes
// nothing; a removed agent starts no new run.
func TestReload(t *testing.T) {
	srv1, n1 := versionServer(t, "v1")
	srv2, n2 := versionServer(t, "v2")
	path := writeSpec(t, reloadSpec(srv1.URL, "Be brief.", ""))
	f1, err := agentspec.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rt := startRuntime(t)
	extra := map[string][]toolsets.Tool{"support": {fetchTicket(t)}}
	h1, err := f1.Register(t.Context(), rt, extra)
	if err != nil {
		t.Fatal(err)
	}
	defer h1.Close()
	waiting := h1.Agent("support").NewSession()
	res, err := waiting.Run(t.Context(), "Fix T-7.")
	if err != nil || res.Status != weft.StatusWaiting {
		t.Fatalf("the v1 run: %v %v, want waiting", res.Status, err)
	}

	load := func(text string) *agentspec.File {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := agentspec.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	other := "  - name: other\n    model: {name: openai-compatible:m, base_url: " + srv2.URL + "/v1, stream: false}\n"
	f2 := load(reloadSpec(srv2.URL, "Be brief.", other))
	h2, ch, err := f2.Reload(t.Context(), rt, h1, extra)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if fmt.Sprint(ch.Changed, ch.Added) != "[support] [other]" {
		t.Errorf("changes %+v", ch)
	}
	res, err = waiting.Resume(t.Context(), weft.Approve(res.Pending.Approvals[0].ID, "erin", nil))
	if err != nil || res.Output != "answered by v1" {
		t.Fatalf("the v1 run after the reload: %q %v, want answered by v1", res.Output, err)
	}
	if n1.Load() != 2 || n2.Load() != 0 {
		t.Errorf("the v1 run asked v1's model %d times and v2's %d, want 2 and 0", n1.Load(), n2.Load())
	}
	fresh := h2.Agent("support").NewSession()
	res, err = fresh.Run(t.Context(), "Fix T-8.")
	if err != nil || res.Status != weft.StatusWaiting || n2.Load() != 1 {
		t.Fatalf("a new run: %v %v, v2's model asked %d times", res.Status, err, n2.Load())
	}
	for sess, want := range map[*weft.Session]string{waiting: f1.AgentVersion("support"), fresh: f2.AgentVersion("support")} {
		evs, err := rt.Store().ReadStream(t.Context(), events.SessionStream(sess.ID()), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(evs[0].Data), `"agent_version":"`+want+`"`) {
			t.Errorf("run.started %s, want version %s", evs[0].Data, want)
		}
	}

	// A file whose second agent fails to register changes nothing, not
	// even the first (registered, then withdrawn).
	f3 := load(reloadSpec(srv1.URL, "Be very brief.", "  - name: bad\n    model: {name: openai-compatible:m, base_url: "+srv1.URL+"/v1}\n    approval_required: [no_such_tool]\n"))
	_, _, err = f3.Reload(t.Context(), rt, h2, extra)
	var se *agentspec.Error
	if !errors.As(err, &se) || se.Line != 12 || !strings.Contains(se.Field, "approval_required") {
		t.Fatalf("reload of a failing file: %v, want an *agentspec.Error at line 12, approval_required", err)
	}
	if v, _ := rt.AgentVersion("support"); v != f2.AgentVersion("support") {
		t.Errorf("after a failed reload new runs start with %s, want v2's %s", v, f2.AgentVersion("support"))
	}
	before := n2.Load()
	if res, err := h2.Agent("support").NewSession().Run(t.Context(), "Fix T-9."); err != nil || res.Status != weft.StatusWaiting || n2.Load() != before+1 {
		t.Errorf("after a failed reload new runs left v2: %v %v", res, err)
	}

	// A removed agent starts no new run.
	f4 := load("version: 1\nagents:\n" + other)
	h4, ch, err := f4.Reload(t.Context(), rt, h2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h4.Close()
	if fmt.Sprint(ch.Removed) != "[support]" {
		t.Errorf("changes %+v", ch)
	}
	if _, ok := rt.AgentVersion("support"); ok {
		t.Error("a removed agent can start runs")
	}
	if _, err := h2.Agent("support").NewSession().Run(t.Context(), "Fix T-10."); !errors.Is(err, weft.ErrUnknownAgent) {
		t.Errorf("a run of a removed agent: %v, want ErrUnknownAgent", err)
	}
}

// A reload that removes an agent the runtime cannot retire (here withdrawn
// behind the file's back) fails before it changes anything: the other
// removed agent is not retired.
func TestReloadRetireFailsFirst(t *testing.T) {
	rt := startRuntime(t)
	f1, h1 := registerFile(t, rt, threeAgents("", ""))
	if err := rt.WithdrawAgent("writer", h1.Version("writer")); err != nil {
		t.Fatal(err)
	}
	f2 := parseFile(t, "version: 1\nagents:\n  - name: planner\n    model: {name: 'openai-compatible:m', base_url: 'http://127.0.0.1:1/v1'}\n    instructions: [plan]\n")
	_, ch, err := f2.Reload(t.Context(), rt, h1, nil)
	var se *agentspec.Error
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "writer") {
		t.Fatalf("reload: %v, want an *agentspec.Error naming writer", err)
	}
	if fmt.Sprint(ch.Removed) != "[researcher writer]" {
		t.Errorf("changes %+v", ch)
	}
	if _, ok := rt.AgentVersion("researcher"); !ok {
		t.Error("a failed reload retired researcher")
	}
	if v, _ := rt.AgentVersion("planner"); v != f1.AgentVersion("planner") {
		t.Errorf("after a failed reload planner starts with %s, want %s", v, f1.AgentVersion("planner"))
	}
}
