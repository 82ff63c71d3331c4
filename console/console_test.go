package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/console"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/toolsets"
)

func okTool(t *testing.T) *node {
	t.Helper()
	return startNode(t, callModel("deploy", `{"env":"prod"}`), approvalTool(t, func(env string) (any, error) { return "deployed " + env, nil }))
}

// TestSignInCookie: the token goes into an HttpOnly, SameSite=Strict
// cookie; a wrong token is refused without being echoed; no page carries
// the token.
func TestSignInCookie(t *testing.T) {
	n := okTool(t)
	b := n.browser(t, "")
	req, _ := http.NewRequest("POST", n.srv.URL+"/console/signin", strings.NewReader(url.Values{"token": {approverToken}, "csrf": {b.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Transport{}).RoundTrip(addCookies(b, req))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var tok *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "weft_console_token" {
			tok = c
		}
	}
	if tok == nil || !tok.HttpOnly || tok.SameSite != http.SameSiteStrictMode || tok.Path != "/console/" {
		t.Fatalf("token cookie %+v, want HttpOnly, SameSite=Strict, Path /console/", tok)
	}
	status, body := b.post("/console/signin", url.Values{"token": {"wrong-token-0123456789"}, "csrf": {b.csrf}}, nil)
	if status != http.StatusOK || !strings.Contains(body, "the token is not valid") || strings.Contains(body, "wrong-token") {
		t.Errorf("a wrong token: %d, page mentions it: %v", status, strings.Contains(body, "wrong-token"))
	}
	signed := n.browser(t, approverToken)
	session := n.waiting(t)
	for _, p := range []string{"/console/queue", "/console/queue/items", "/console/sessions", "/console/sessions/" + session, "/console/sessions/" + session + "/events.jsonl"} {
		if page := signed.get(p); strings.Contains(page, approverToken) {
			t.Errorf("%s holds the token", p)
		}
	}
	evs, _ := n.store.ReadStream(t.Context(), events.SessionStream(session), 0)
	for _, ev := range evs {
		if strings.Contains(string(ev.Data), approverToken) {
			t.Errorf("event %s holds the token", ev.Type)
		}
	}
	if strings.Contains(n.logs.String(), approverToken) {
		t.Error("a log line holds the token")
	}
	// Signed out, a page sends the browser to the sign-in form.
	anon := n.browser(t, "")
	if page := anon.get("/console/queue"); !strings.Contains(page, `id="signin"`) {
		t.Error("an anonymous browser is not sent to sign in")
	}
}

func addCookies(b *browser, req *http.Request) *http.Request {
	for _, c := range b.c.Jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	return req
}

// TestCSRFForgeries: every state-changing request without its browser's
// CSRF token, or from another site, is refused with 403 and changes
// nothing.
func TestCSRFForgeries(t *testing.T) {
	n := okTool(t)
	session := n.waiting(t)
	victim := n.browser(t, approverToken)
	other := n.browser(t, viewerToken)
	path := "/console/sessions/" + session + "/pending/c1/approve"
	tests := []struct {
		name   string
		form   url.Values
		header http.Header
		strip  bool // send no CSRF cookie
	}{
		{"no token", url.Values{}, nil, false},
		{"wrong token", url.Values{"csrf": {strings.Repeat("0", 64)}}, nil, false},
		{"another browser's token", url.Values{"csrf": {other.csrf}}, nil, false},
		{"token in a header of another browser", nil, http.Header{"X-Csrf-Token": {other.csrf}}, false},
		{"cross-site, right token", url.Values{"csrf": {victim.csrf}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}, false},
		{"same-site, right token", url.Values{"csrf": {victim.csrf}}, http.Header{"Sec-Fetch-Site": {"same-site"}}, false},
		{"no CSRF cookie", url.Values{"csrf": {victim.csrf}}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", n.srv.URL+path, strings.NewReader(tc.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range tc.header {
				req.Header[k] = v
			}
			for _, c := range victim.c.Jar.Cookies(req.URL) {
				if tc.strip && c.Name == "weft_console_csrf" {
					continue
				}
				req.AddCookie(c)
			}
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("status %d, want 403", resp.StatusCode)
			}
		})
	}
	st, err := n.agent.Session(session).Status(t.Context())
	if err != nil || st.Active == "" {
		t.Fatalf("after the forgeries the run is %+v, %v; want still waiting", st, err)
	}
	// The real browser's request goes through.
	if got := victim.decide(session, "c1", "approve", url.Values{}); got["ok"] != true {
		t.Errorf("the right request: %v", got)
	}
}

// TestSecurityHeaders: every response, pages, fragments, static files
// and refusals, carries the strict CSP and nosniff; pages have no inline
// script.
func TestSecurityHeaders(t *testing.T) {
	n := okTool(t)
	b := n.browser(t, approverToken)
	for _, p := range []string{"/console/signin", "/console/queue", "/console/queue/items", "/console/sessions", "/console/static/console.js", "/console/static/console.css"} {
		resp, err := b.c.Get(n.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Content-Security-Policy"); got != console.CSP {
			t.Errorf("%s: CSP %q", p, got)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", p, resp.Header)
		}
	}
	if !strings.Contains(console.CSP, "default-src 'none'") || !strings.Contains(console.CSP, "script-src 'self'") || strings.Contains(console.CSP, "unsafe") {
		t.Errorf("CSP %q is not strict", console.CSP)
	}
	page := b.get("/console/queue")
	for _, bad := range []string{"<script>", "onclick=", "onload=", "javascript:", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("the queue page holds %q", bad)
		}
	}
}

// TestEscaping: a tool result with HTML in it is text on the timeline.
func TestEscaping(t *testing.T) {
	const evil = `<script>window.pwned=1</script><img src=x onerror=alert(1)>`
	tl, err := toolsets.NewFunc("lookup", func(context.Context, struct{}) (string, error) { return evil, nil })
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, callModel("lookup", `{}`), tl)
	s := n.agent.NewSession()
	if res, err := s.Run(t.Context(), "look "+evil); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	page := n.browser(t, viewerToken).get("/console/sessions/" + s.ID())
	if strings.Contains(page, "<script>window") || strings.Contains(page, "<img src=x") {
		t.Error("the tool's HTML is in the page as markup")
	}
	if !strings.Contains(page, "&lt;script&gt;window.pwned=1&lt;/script&gt;") {
		t.Error("the tool's text is not on the page, escaped")
	}
}

// TestPrivateMetadataRedacted: a return's private metadata shows to an
// approver only, on the page and in the JSONL download.
func TestPrivateMetadataRedacted(t *testing.T) {
	tl, err := toolsets.NewFunc("probe", func(context.Context, struct{}) (toolsets.Result, error) {
		return toolsets.Result{Content: "probed", PrivateMetadata: map[string]any{"stack": "private-stack-trace"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, callModel("probe", `{}`), tl)
	s := n.agent.NewSession()
	if res, err := s.Run(t.Context(), "probe"); err != nil || res.Status != weft.StatusCompleted {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	for _, tc := range []struct {
		token string
		see   bool
	}{{viewerToken, false}, {approverToken, true}} {
		b := n.browser(t, tc.token)
		page, dl := b.get("/console/sessions/"+s.ID()), b.get("/console/sessions/"+s.ID()+"/events.jsonl")
		if strings.Contains(page, "private-stack-trace") != tc.see || strings.Contains(dl, "private-stack-trace") != tc.see {
			t.Errorf("approver %v: sees private metadata on the page %v, in the download %v", tc.see, strings.Contains(page, "private-stack-trace"), strings.Contains(dl, "private-stack-trace"))
		}
		if !tc.see && !strings.Contains(page, "redacted: return.private_metadata") {
			t.Error("the viewer's page does not say what was redacted")
		}
	}
}

// TestDecisions: edited arguments that fail the tool's schema are refused
// with the API's message; a denial records its reason; an item decided
// elsewhere says by whom and when; a viewer may not decide.
func TestDecisions(t *testing.T) {
	n := okTool(t)
	b := n.browser(t, approverToken)
	session := n.waiting(t)
	if got := n.browser(t, viewerToken).decide(session, "c1", "approve", url.Values{}); got["status"] != float64(403) || got["ok"] == true {
		t.Errorf("a viewer's approval: %v", got)
	}
	got := b.decide(session, "c1", "approve", url.Values{"arguments": {`{"env":7}`}})
	if got["ok"] == true || got["status"] != float64(422) || !strings.Contains(got["message"].(string), "env") {
		t.Errorf("arguments failing the schema: %v", got)
	}
	if got := b.decide(session, "c1", "approve", url.Values{"arguments": {`{"env":`}}); got["status"] != float64(400) {
		t.Errorf("arguments that are not JSON: %v", got)
	}
	st, err := n.agent.Session(session).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := b.decide(session, "c1", "approve", url.Values{"arguments": {`{"env":"staging"}`}}); got["ok"] != true {
		t.Fatalf("approve with edited arguments: %v", got)
	}
	n.completes(t, session, st.Active)
	page := b.get("/console/sessions/" + session)
	if !strings.Contains(page, "deployed staging") || !strings.Contains(page, "approved by ana (authenticated)") {
		t.Errorf("the timeline does not show the approval and the edited run")
	}
	// Decided elsewhere: another session, decided over the API first.
	other := n.waiting(t)
	if _, err := n.agent.Session(other).Decide(t.Context(), weft.Deny("c1", "bob", "not on a Friday")); err != nil {
		t.Fatal(err)
	}
	got = b.decide(other, "c1", "approve", url.Values{})
	if d, _ := got["decided"].(string); !strings.Contains(d, "already denied by bob at 20") {
		t.Errorf("a decision taken elsewhere: %v", got)
	}
	if page := b.get("/console/sessions/" + other); !strings.Contains(page, "denied by bob") || !strings.Contains(page, "not on a Friday") {
		t.Error("the denial and its reason are not on the timeline")
	}
}

// tampered reads a memstore's events with version 3's data changed.
type tampered struct{ *memstore.Store }

func (s tampered) ReadStream(ctx context.Context, stream string, from uint64) ([]events.Event, error) {
	evs, err := s.Store.ReadStream(ctx, stream, from)
	for i := range evs {
		if evs[i].Version == 3 {
			evs[i].Data = json.RawMessage(`{"tampered":true}`)
		}
	}
	return evs, err
}

// TestChainStatus: the session page says the chain is verified, or where
// it breaks.
func TestChainStatus(t *testing.T) {
	store := memstore.New()
	n := startNodeStore(t, store, tampered{store}, callModel("deploy", `{"env":"prod"}`), approvalTool(t, func(string) (any, error) { return "ok", nil }))
	session := n.waiting(t)
	page := n.browser(t, viewerToken).get("/console/sessions/" + session)
	// The plain chain breaks at the link after the changed event.
	if !strings.Contains(page, "broken at version 4: wrong prev hash (version 3 or the link to it was changed)") {
		t.Error("a log whose version 3 was changed is not reported broken at version 4")
	}
	good := okTool(t)
	if page := good.browser(t, viewerToken).get("/console/sessions/" + good.waiting(t)); !strings.Contains(page, "verified") {
		t.Error("an intact log is not reported verified")
	}
}
