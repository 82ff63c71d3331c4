package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-run/weft/events"
)

// writeTokens writes the API token file dir/tokens, one "name roles
// token" line per entry, and returns its path.
func writeTokens(t *testing.T, dir string, lines ...string) string {
	t.Helper()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return tokens
}

// weft serve --demo --http serves the API: the demo's waiting approval is
// listed, a viewer may not approve it (403), no token is 401, the
// approver's approval records the token's principal, and the run's events
// stream until it completes.
func TestServeHTTPDemo(t *testing.T) {
	dir := t.TempDir()
	const viewer, approver = "viewer-token-e2e-0123456789", "approver-token-e2e-0123456789"
	tokens := writeTokens(t, dir, "vic viewer "+viewer, "alice approver "+approver)
	stdout, done, stop := serveInBackground(t, "serve", "--demo", "--listen", "127.0.0.1:-1", "--json", "--http", "127.0.0.1:0", "--http-tokens", tokens)
	first, _, _ := strings.Cut(stdout.waitFor(t, t.Context(), done, "\n"), "\n")
	rep := decodeJSON[serveReport](t, first)
	if !strings.HasPrefix(rep.HTTP, "http://127.0.0.1:") || rep.Demo == nil {
		t.Fatalf("serve report = %+v", rep)
	}
	call := func(method, path, token string, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, rep.HTTP+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := call("GET", "/readyz", "", ""); code != http.StatusOK {
		t.Fatalf("readyz: %d %s", code, b)
	}
	if code, b := call("GET", "/v1/pending", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d %s", code, b)
	}
	code, b := call("GET", "/v1/pending", viewer, "")
	if code != http.StatusOK || !strings.Contains(b, `"tool_call_id":"call_deploy"`) || !strings.Contains(b, rep.Demo.SessionID) {
		t.Fatalf("pending: %d %s", code, b)
	}
	approve := "/v1/sessions/" + rep.Demo.SessionID + "/pending/call_deploy/approve"
	if code, b := call("POST", approve, viewer, "{}"); code != http.StatusForbidden {
		t.Fatalf("viewer approves: %d %s", code, b)
	}

	// Follow the session's events from its start while the approver
	// approves.
	req, err := http.NewRequestWithContext(t.Context(), "GET", rep.HTTP+"/v1/sessions/"+rep.Demo.SessionID+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+viewer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if code, b := call("POST", approve, approver, "{}"); code != http.StatusAccepted {
		t.Fatalf("approver approves: %d %s", code, b)
	}
	var decided *events.ApprovalDecided
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev events.Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeApprovalDecided {
			d, err := events.DecodeAs[events.ApprovalDecided](ev)
			if err != nil {
				t.Fatal(err)
			}
			decided = &d
		}
		if ev.Type == events.TypeRunCompleted {
			break
		}
	}
	if decided == nil || decided.By != "alice" || !decided.Authenticated || !decided.Approved {
		t.Fatalf("approval.decided %+v, want approved by alice, authenticated", decided)
	}
	resp.Body.Close()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// The --http-* flags need --http; the API refuses every interface
// without tokens.
func TestServeHTTPFlags(t *testing.T) {
	if _, _, err := cli(t, "serve", "--http-tokens", "x"); err == nil || !strings.Contains(err.Error(), "need --http") {
		t.Fatalf("--http-tokens without --http: %v", err)
	}
	t.Setenv("WEFT_HTTP_TOKENS", "")
	_, _, err := cli(t, "serve", "--listen", "127.0.0.1:-1", "--http", "0.0.0.0:0")
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("--http 0.0.0.0:0 without tokens: %v", err)
	}
}

// The API's tokens come from --http-tokens, else $WEFT_HTTP_TOKENS; a bad
// list names its source and line.
func TestLoadHTTPTokens(t *testing.T) {
	t.Setenv("WEFT_HTTP_TOKENS", "ops operator env-token-0123456789; vic viewer env-token-9876543210")
	tok, source, err := loadHTTPTokens("")
	if err != nil || tok.Len() != 2 || source != "$WEFT_HTTP_TOKENS" {
		t.Fatalf("from the environment: %d tokens from %q, %v", tok.Len(), source, err)
	}
	file := writeTokens(t, t.TempDir(), "alice approver file-token-0123456789")
	if tok, source, err = loadHTTPTokens(file); err != nil || tok.Len() != 1 || source != file {
		t.Fatalf("from the file: %d tokens from %q, %v", tok.Len(), source, err)
	}
	t.Setenv("WEFT_HTTP_TOKENS", "ops operator")
	if _, _, err := loadHTTPTokens(""); err == nil || !strings.Contains(err.Error(), "$WEFT_HTTP_TOKENS:1") {
		t.Fatalf("a bad list: %v, want its source and line", err)
	}
}
