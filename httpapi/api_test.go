package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// Every /v1 operation but the document needs a token whose principal has
// the operation's role: no token or an unknown one is 401, a token
// without the role 403; the probes are public. Tokens never show in an
// answer or a log line.
func TestAuthorisation(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ops := []struct {
		method, path string
		role         string // "" public
	}{
		{"GET", "/healthz", ""},
		{"GET", "/readyz", ""},
		{"GET", "/v1/openapi.yaml", ""},
		{"GET", "/v1/whoami", "viewer"},
		{"GET", "/v1/agents", "viewer"},
		{"GET", "/v1/sessions", "viewer"},
		{"GET", "/v1/sessions/s1", "viewer"},
		{"GET", "/v1/sessions/s1/runs/r1", "viewer"},
		{"GET", "/v1/pending", "viewer"},
		{"POST", "/v1/runs", "operator"},
		{"POST", "/v1/sessions/s1/runs", "operator"},
		{"POST", "/v1/sessions/s1/runs/r1/cancel", "operator"},
		{"POST", "/v1/sessions/s1/decisions", "approver"},
		{"POST", "/v1/sessions/s1/pending/c1/approve", "approver"},
		{"POST", "/v1/sessions/s1/pending/c1/deny", "approver"},
		{"POST", "/v1/sessions/s1/pending/c1/complete", "approver"},
		{"POST", "/v1/sessions/s1/pending/c1/fail", "approver"},
		{"POST", "/v1/sessions/s1/pending/c1/answer", "approver"},
	}
	const badToken = "not-a-token-but-a-secret-4242"
	callers := []struct {
		name, token string
		roles       []string
	}{
		{"no token", "", nil},
		{"unknown token", badToken, nil},
		{"viewer", viewerToken, []string{"viewer"}},
		{"operator", operatorToken, []string{"viewer", "operator"}},
		{"approver", approverToken, []string{"viewer", "approver"}},
		{"hashed entry", hashedToken, []string{"viewer", "operator", "approver"}},
	}
	for _, op := range ops {
		for _, c := range callers {
			t.Run(op.method+" "+op.path+" "+c.name, func(t *testing.T) {
				code, body := f.do(t, op.method, op.path, c.token, "{}")
				switch {
				case op.role == "":
					if code != http.StatusOK {
						t.Fatalf("public %s: %d %s", op.path, code, body)
					}
				case c.roles == nil:
					if code != http.StatusUnauthorized {
						t.Fatalf("%s: %d %s, want 401", c.name, code, body)
					}
				case !contains(c.roles, op.role):
					if code != http.StatusForbidden {
						t.Fatalf("%s: %d %s, want 403", c.name, code, body)
					}
				default:
					if code == http.StatusUnauthorized || code == http.StatusForbidden {
						t.Fatalf("%s with role %s: %d %s", c.name, op.role, code, body)
					}
				}
				for _, tok := range []string{badToken, viewerToken, operatorToken, approverToken, hashedToken} {
					if strings.Contains(string(body), tok) {
						t.Fatalf("the answer holds a token: %s", body)
					}
				}
			})
		}
	}
	for _, tok := range []string{badToken, viewerToken, operatorToken, approverToken, hashedToken} {
		if strings.Contains(f.logs.String(), tok) {
			t.Fatalf("a log line holds a token:\n%s", f.logs.String())
		}
	}
	if !strings.Contains(f.logs.String(), "principal=vera") {
		t.Errorf("no log line names the viewer's principal:\n%.2000s", f.logs.String())
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A run started over the API waits for the deploy's approval; the
// approver's approval records the token's principal as by, marked
// authenticated, and the run completes.
func TestStartApproveComplete(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ref := f.start(t, "deploy prod")
	run := f.wait(t, ref)
	if run.Status != "waiting" || len(run.Pending) != 1 {
		t.Fatalf("run %+v, want waiting for one approval", run)
	}
	code, b := f.do(t, "GET", "/v1/pending?session="+ref.SessionID, viewerToken, nil)
	pend := decode[struct {
		Pending []struct {
			ToolCallID string `json:"tool_call_id"`
			Tool       string `json:"tool"`
			RunID      string `json:"run_id"`
		} `json:"pending"`
	}](t, b)
	if code != http.StatusOK || len(pend.Pending) != 1 || pend.Pending[0].Tool != "deploy" || pend.Pending[0].RunID != ref.RunID {
		t.Fatalf("pending: %d %s", code, b)
	}
	call := pend.Pending[0].ToolCallID
	if code, b := f.do(t, "POST", "/v1/sessions/"+ref.SessionID+"/pending/"+call+"/approve", viewerToken, map[string]any{}); code != http.StatusForbidden {
		t.Fatalf("viewer approves: %d %s", code, b)
	}
	if code, b := f.do(t, "POST", "/v1/sessions/"+ref.SessionID+"/pending/"+call+"/approve", approverToken, map[string]any{"by": "someone else"}); code != http.StatusBadRequest {
		t.Fatalf("an approval naming another by: %d %s, want 400", code, b)
	}
	code, b = f.do(t, "POST", "/v1/sessions/"+ref.SessionID+"/pending/"+call+"/approve", approverToken, map[string]any{"arguments": map[string]string{"env": "staging"}})
	if code != http.StatusAccepted {
		t.Fatalf("approve: %d %s", code, b)
	}
	if got := decode[runRef](t, b); got != ref {
		t.Fatalf("approve answered %+v, want %+v", got, ref)
	}
	if run := f.wait(t, ref); run.Status != "completed" || run.Output != "deployed" {
		t.Fatalf("run after the approval: %+v", run)
	}
	evs, err := f.rt.Store().ReadStream(t.Context(), events.SessionStream(ref.SessionID), 0)
	if err != nil {
		t.Fatal(err)
	}
	var decided []events.ApprovalDecided
	var returned string
	for _, ev := range evs {
		switch ev.Type {
		case events.TypeApprovalDecided:
			decided = append(decided, decode[events.ApprovalDecided](t, ev.Data))
		case events.TypeToolReturned:
			returned = string(ev.Data)
		}
	}
	want := []events.ApprovalDecided{{Approved: true, By: "ana", Authenticated: true, Arguments: json.RawMessage(`{"env":"staging"}`)}}
	if diff := cmp.Diff(want, decided); diff != "" {
		t.Errorf("approval.decided (-want +got):\n%s", diff)
	}
	if !strings.Contains(returned, "deployed to staging") {
		t.Errorf("the tool ran without the reviewed arguments: %s", returned)
	}
}

// Without tokens every caller is the unauthenticated "local": a decision
// records the by it gives, not marked authenticated.
func TestNoTokensDecisionUnauthenticated(t *testing.T) {
	f := newFixture(t, fixtureOptions{noTokens: true})
	code, b := f.do(t, "POST", "/v1/runs", "", map[string]any{"prompt": "deploy"})
	if code != http.StatusAccepted {
		t.Fatalf("start: %d %s", code, b)
	}
	ref := decode[runRef](t, b)
	run := f.wait(t, ref)
	code, b = f.do(t, "POST", "/v1/sessions/"+ref.SessionID+"/decisions", "", map[string]any{"decisions": []map[string]any{{"id": run.Pending[0].ID, "action": "deny", "reason": "not today", "by": "bob"}}})
	if code != http.StatusAccepted {
		t.Fatalf("deny: %d %s", code, b)
	}
	f.wait(t, ref)
	evs, _ := f.rt.Store().ReadStream(t.Context(), events.SessionStream(ref.SessionID), 0)
	for _, ev := range evs {
		if ev.Type == events.TypeApprovalDecided {
			d := decode[events.ApprovalDecided](t, ev.Data)
			if d.By != "bob" || d.Authenticated || d.Approved {
				t.Fatalf("approval.decided %+v, want a denial by bob, unauthenticated", d)
			}
			return
		}
	}
	t.Fatal("no approval.decided")
}

// A retried start with the same Idempotency-Key answers the same session
// and run and starts one run; the key with another prompt is refused; a
// start without a key is a new session each time.
func TestIdempotencyKey(t *testing.T) {
	f := newFixture(t, fixtureOptions{noGate: true})
	first := f.start(t, "deploy", "Idempotency-Key", "k-1")
	f.wait(t, first)
	again := f.start(t, "deploy", "Idempotency-Key", "k-1")
	if again != first {
		t.Fatalf("retried start answered %+v, want %+v", again, first)
	}
	evs, _ := f.rt.Store().ReadStream(t.Context(), events.SessionStream(first.SessionID), 0)
	started := 0
	for _, ev := range evs {
		if ev.Type == events.TypeRunStarted {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("%d runs started, want 1", started)
	}
	code, b := f.do(t, "POST", "/v1/runs", operatorToken, map[string]any{"prompt": "something else"}, "Idempotency-Key", "k-1")
	if code != http.StatusConflict || !strings.Contains(string(b), "idempotency_conflict") {
		t.Fatalf("the key with another prompt: %d %s, want 409 idempotency_conflict", code, b)
	}
	// In an existing session, the key derives the run id.
	inSession := func() runRef {
		code, b := f.do(t, "POST", "/v1/sessions/"+first.SessionID+"/runs", operatorToken, map[string]any{"prompt": "again"}, "Idempotency-Key", "k-2")
		if code != http.StatusAccepted {
			t.Fatalf("start in the session: %d %s", code, b)
		}
		return decode[runRef](t, b)
	}
	second := inSession()
	f.wait(t, second)
	if got := inSession(); got != second || second.SessionID != first.SessionID || second.RunID == first.RunID {
		t.Fatalf("retried start in the session: %+v then %+v (first run %+v)", second, got, first)
	}
	a, b2 := f.start(t, "deploy"), f.start(t, "deploy")
	if a.SessionID == b2.SessionID {
		t.Fatalf("two starts without a key share session %s", a.SessionID)
	}
}

// GET /v1/sessions filters by agent, status and waiting; GET a session is
// its archive view; an unknown one is 404.
func TestSessions(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	waiting := f.start(t, "deploy")
	f.wait(t, waiting)
	cancelled := f.start(t, "deploy")
	f.wait(t, cancelled)
	if code, b := f.do(t, "POST", "/v1/sessions/"+cancelled.SessionID+"/runs/"+cancelled.RunID+"/cancel", operatorToken, map[string]string{"reason": "test"}); code != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", code, b)
	}
	if run := f.wait(t, cancelled); run.Status != "cancelled" {
		t.Fatalf("cancelled run: %+v", run)
	}
	if code, b := f.do(t, "POST", "/v1/sessions/"+cancelled.SessionID+"/runs/"+cancelled.RunID+"/cancel", operatorToken, nil); code != http.StatusConflict {
		t.Fatalf("cancel an ended run: %d %s, want 409", code, b)
	}
	list := func(query string) []string {
		t.Helper()
		code, b := f.do(t, "GET", "/v1/sessions"+query, viewerToken, nil)
		if code != http.StatusOK {
			t.Fatalf("list %s: %d %s", query, code, b)
		}
		var ids []string
		for _, s := range decode[struct {
			Sessions []struct {
				SessionID string `json:"session_id"`
			} `json:"sessions"`
		}](t, b).Sessions {
			ids = append(ids, s.SessionID)
		}
		return ids
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"?waiting=true", []string{waiting.SessionID}},
		{"?status=cancelled", []string{cancelled.SessionID}},
		{"?waiting=false", []string{cancelled.SessionID}},
		{"?agent=ops", []string{cancelled.SessionID, waiting.SessionID}},
		{"?agent=nobody", nil},
		{"?since=2999-01-01T00:00:00Z", nil},
		{"?before=2000-01-01T00:00:00Z", nil},
		{"?limit=1", []string{cancelled.SessionID}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, list(tc.query)); diff != "" {
			t.Errorf("sessions%s (-want +got):\n%s", tc.query, diff)
		}
	}
	if code, b := f.do(t, "GET", "/v1/sessions?status=sleeping", viewerToken, nil); code != http.StatusBadRequest {
		t.Errorf("a bad status filter: %d %s", code, b)
	}
	code, b := f.do(t, "GET", "/v1/sessions/"+waiting.SessionID, viewerToken, nil)
	ar := decode[struct {
		SessionID string `json:"session_id"`
		Runs      []struct {
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		} `json:"runs"`
		Pending []struct {
			Tool string `json:"tool"`
		} `json:"pending"`
	}](t, b)
	if code != http.StatusOK || ar.SessionID != waiting.SessionID || len(ar.Runs) != 1 || ar.Runs[0].Status != "waiting" || len(ar.Pending) != 1 {
		t.Fatalf("session: %d %s", code, b)
	}
	if code, b := f.do(t, "GET", "/v1/sessions/nope", viewerToken, nil); code != http.StatusNotFound {
		t.Fatalf("unknown session: %d %s", code, b)
	}
}

// Refused decisions answer the runtime's typed errors as HTTP statuses.
func TestDecisionErrors(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ref := f.start(t, "deploy")
	run := f.wait(t, ref)
	call := run.Pending[0].ID
	base := "/v1/sessions/" + ref.SessionID
	tests := []struct {
		name, path string
		body       any
		want       int
	}{
		{"deny without a reason", base + "/pending/" + call + "/deny", map[string]any{}, http.StatusBadRequest},
		{"complete an approval", base + "/pending/" + call + "/complete", map[string]any{"result": 1}, http.StatusUnprocessableEntity},
		{"unknown call", base + "/pending/nope/approve", map[string]any{}, http.StatusNotFound},
		{"arguments not an object", base + "/pending/" + call + "/approve", map[string]any{"arguments": 3}, http.StatusUnprocessableEntity},
		{"unknown field", base + "/pending/" + call + "/approve", map[string]any{"note": "x"}, http.StatusBadRequest},
		{"no decisions", base + "/decisions", map[string]any{"decisions": []any{}}, http.StatusBadRequest},
		{"session not waiting", "/v1/sessions/other/pending/" + call + "/approve", map[string]any{}, http.StatusConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, b := f.do(t, "POST", tc.path, approverToken, tc.body); code != tc.want {
				t.Fatalf("%d %s, want %d", code, b, tc.want)
			}
		})
	}
	if code, b := f.do(t, "POST", base+"/decisions", approverToken, map[string]any{"decisions": []map[string]any{{"id": call, "action": "deny", "reason": "no"}}}); code != http.StatusAccepted {
		t.Fatalf("deny: %d %s", code, b)
	}
	f.wait(t, ref)
	if code, b := f.do(t, "POST", base+"/pending/"+call+"/approve", approverToken, map[string]any{}); code != http.StatusConflict {
		t.Fatalf("decide again: %d %s, want 409", code, b)
	}
}

// /healthz answers while the process serves; /readyz says which check
// fails (no agents loaded here).
func TestProbes(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	if code, b := f.do(t, "GET", "/readyz", "", nil); code != http.StatusOK || !strings.Contains(string(b), `"ready"`) {
		t.Fatalf("readyz: %d %s", code, b)
	}
	g := newFixture(t, fixtureOptions{noAgents: true})
	if code, b := g.do(t, "GET", "/healthz", "", nil); code != http.StatusOK {
		t.Fatalf("healthz: %d %s", code, b)
	}
	code, b := g.do(t, "GET", "/readyz", "", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(b), "none loaded") {
		t.Fatalf("readyz without agents: %d %s", code, b)
	}
	_ = g.rt.Close()
	code, b = g.do(t, "GET", "/readyz", "", nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(b), "not connected") {
		t.Fatalf("readyz after the runtime closed: %d %s", code, b)
	}
}

// CORS is off by default; with origins, an allowed origin gets the
// headers and its preflight is answered.
func TestCORS(t *testing.T) {
	preflight := func(f *fixture) (int, http.Header) {
		req, _ := http.NewRequestWithContext(t.Context(), "OPTIONS", f.srv.URL+"/v1/runs", nil)
		req.Header.Set("Origin", "https://ui.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	off := newFixture(t, fixtureOptions{})
	if code, h := preflight(off); h.Get("Access-Control-Allow-Origin") != "" || code == http.StatusNoContent {
		t.Fatalf("CORS off: %d %v", code, h)
	}
	on := newFixture(t, fixtureOptions{cors: []string{"https://ui.example"}})
	if code, h := preflight(on); code != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://ui.example" {
		t.Fatalf("CORS on: %d %v", code, h)
	}
}

// An elicitation is answered over the API: an answer that does not fit
// the requested schema is refused (422), a fitting one runs the tool again
// with it, and elicitation.answered records the principal, authenticated.
func TestAnswerElicitation(t *testing.T) {
	f := newFixture(t, fixtureOptions{noGate: true, elicit: true})
	ref := f.start(t, "deploy")
	run := f.wait(t, ref)
	if run.Status != "waiting" || len(run.Pending) != 1 {
		t.Fatalf("run %+v, want waiting for one elicitation", run)
	}
	code, b := f.do(t, "GET", "/v1/pending?kind=elicitation", viewerToken, nil)
	if code != http.StatusOK || !strings.Contains(string(b), `"kind":"elicitation"`) {
		t.Fatalf("pending elicitations: %d %s", code, b)
	}
	path := "/v1/sessions/" + ref.SessionID + "/pending/" + run.Pending[0].ID + "/answer"
	for _, tc := range []struct {
		name string
		body any
		want int
	}{
		{"no answer", map[string]any{}, http.StatusBadRequest},
		{"decline with content", map[string]any{"answer": "decline", "content": map[string]string{"env": "x"}}, http.StatusBadRequest},
		{"content off the schema", map[string]any{"answer": "accept", "content": map[string]int{"env": 3}}, http.StatusUnprocessableEntity},
	} {
		if code, b := f.do(t, "POST", path, approverToken, tc.body); code != tc.want {
			t.Fatalf("%s: %d %s, want %d", tc.name, code, b, tc.want)
		}
	}
	if code, b := f.do(t, "POST", path, approverToken, map[string]any{"answer": "accept", "content": map[string]string{"env": "qa"}}); code != http.StatusAccepted {
		t.Fatalf("answer: %d %s", code, b)
	}
	if run := f.wait(t, ref); run.Status != "completed" {
		t.Fatalf("run after the answer: %+v", run)
	}
	evs, _ := f.rt.Store().ReadStream(t.Context(), events.SessionStream(ref.SessionID), 0)
	var answered []events.ElicitationAnswered
	returned := ""
	for _, ev := range evs {
		switch ev.Type {
		case events.TypeElicitationAnswered:
			answered = append(answered, decode[events.ElicitationAnswered](t, ev.Data))
		case events.TypeToolReturned:
			returned = string(ev.Data)
		}
	}
	want := []events.ElicitationAnswered{{Action: "accept", Content: json.RawMessage(`{"env":"qa"}`), By: "ana", Authenticated: true}}
	if diff := cmp.Diff(want, answered); diff != "" {
		t.Errorf("elicitation.answered (-want +got):\n%s", diff)
	}
	if !strings.Contains(returned, "deployed to qa") {
		t.Errorf("the tool did not run with the answer: %s", returned)
	}
}
