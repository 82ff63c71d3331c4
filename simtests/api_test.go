package simtests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The HTTP API on two nodes of one cluster: a run started through node
// a's API is followed and approved through node b's, and node b's event
// stream of the session has the whole run, in log order.
func TestAPIAcrossNodes(t *testing.T) {
	h := newHarness(t)
	h.httpAPI = true
	s := h.startAll()
	a, b := s.nodes["a"].rep.HTTP, s.nodes["b"].rep.HTTP
	if a == "" || b == "" || a == b {
		t.Fatalf("the nodes' HTTP APIs: %q and %q", a, b)
	}
	call := func(method, url, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequestWithContext(h.ctx, method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var v map[string]any
		if resp.StatusCode >= 300 || json.Unmarshal(raw, &v) != nil {
			t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
		}
		return v
	}
	started := call("POST", a+"/v1/runs", fmt.Sprintf(`{"agent":%q,"prompt":%q}`, demoAgent, demoPrompt))
	session, run := started["session_id"].(string), started["run_id"].(string)
	if st := call("GET", fmt.Sprintf("%s/v1/sessions/%s/runs/%s?wait=30s", b, session, run), ""); st["status"] != "waiting" {
		t.Fatalf("the run through node b: %v, want waiting", st)
	}
	call("POST", fmt.Sprintf("%s/v1/sessions/%s/pending/%s/approve", b, session, demoApproval), `{}`)
	if st := call("GET", fmt.Sprintf("%s/v1/sessions/%s/runs/%s?wait=30s", a, session, run), ""); st["status"] != "completed" {
		t.Fatalf("the run through node a after node b's approval: %v, want completed", st)
	}
	req, err := http.NewRequestWithContext(h.ctx, "GET", fmt.Sprintf("%s/v1/sessions/%s/events?after=0", b, session), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var types []string
	last := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string  `json:"type"`
			Position float64 `json:"position"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Position <= last {
			t.Fatalf("event %s at position %v after %v", ev.Type, ev.Position, last)
		}
		last = ev.Position
		types = append(types, ev.Type)
		if ev.Type == "run.completed" {
			break
		}
	}
	got := strings.Join(types, " ")
	for _, want := range []string{"run.started", "approval.requested", "run.waiting", "approval.decided", "run.resumed", "run.completed"} {
		if !strings.Contains(got, want) {
			t.Errorf("node b's stream of the session lacks %s: %s", want, got)
		}
	}
}
