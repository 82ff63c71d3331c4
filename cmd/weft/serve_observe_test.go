package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"

	"github.com/weft-run/weft/console"
)

// weft serve --http mounts the console under /console and the metrics on
// /metrics (for a token with any role), beside the API.
func TestServeObserve(t *testing.T) {
	dir := t.TempDir()
	const viewer = "viewer-token-observe-0123456789"
	tokens := writeTokens(t, dir, "vic viewer "+viewer)
	stdout, done, _ := serveInBackground(t, "serve", "--demo", "--listen", "127.0.0.1:-1", "--json", "--http", "127.0.0.1:0", "--http-tokens", tokens,
		"--log-format", "json", "--log-level", "info")
	first, _, _ := strings.Cut(stdout.waitFor(t, t.Context(), done, "\n"), "\n")
	rep := decodeJSON[serveReport](t, first)
	get := func(path, token string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", rep.HTTP+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("/console/signin", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Security-Policy") != console.CSP || !strings.Contains(body, `name="token"`) {
		t.Errorf("/console/signin: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := get("/metrics", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d", resp.StatusCode)
	}
	resp, body = get("/metrics", viewer)
	fams, err := (&expfmt.TextParser{}).TextToMetricFamilies(strings.NewReader(body))
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	for _, name := range []string{"weft_runs_total", "gen_ai_client_operation_duration_seconds", "weft_hitl_pending", "weft_events_append_duration_seconds"} {
		if fams[name] == nil {
			t.Errorf("/metrics has no %s", name)
		}
	}
	if resp, _ := get("/v1/whoami", viewer); resp.StatusCode != http.StatusOK {
		t.Errorf("the API beside them: %d", resp.StatusCode)
	}
}

// --log-format and --log-level take only the values they know.
func TestServeObserveFlags(t *testing.T) {
	for _, args := range [][]string{{"--log-format", "xml"}, {"--log-level", "loud"}} {
		err := run(context.Background(), append([]string{"serve"}, args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("serve %v: %v, want a usage error naming the flag", args, err)
		}
	}
}
