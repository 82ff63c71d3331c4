//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// textModel is an OpenAI-compatible server that answers text, without
// streaming.
func textModel(t *testing.T, text string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, text)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func greeterSpec(url, more string) string {
	return "version: 1\nagents:\n  - name: greeter\n    model: {name: openai-compatible:m, base_url: " + url + "/v1, stream: false}\n" + more
}

// weft serve reloads its spec file on POST /v1/agents/reload and on
// SIGHUP: new runs use the new declaration; a file that fails is 422
// reload_failed naming its line, and changes nothing.
func TestServeReload(t *testing.T) {
	v1, v2, v3 := textModel(t, "v1 says hi"), textModel(t, "v2 says hi"), textModel(t, "v3 says hi")
	dir := t.TempDir()
	spec := filepath.Join(dir, "agents.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(spec, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(greeterSpec(v1, ""))
	stdout, done, _ := serveInBackground(t, "serve", "--agents", spec, "--listen", "127.0.0.1:-1", "--json", "--http", "127.0.0.1:0")
	first, _, _ := strings.Cut(stdout.waitFor(t, t.Context(), done, "\n"), "\n")
	rep := decodeJSON[serveReport](t, first)
	t.Setenv(credsDirEnv, rep.CredsDir)
	answer := func() string {
		t.Helper()
		out, errOut, err := cli(t, "run", "greeter", "hi", "--url", rep.HTTP)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		return strings.TrimSpace(out)
	}
	reload := func() (int, string) {
		t.Helper()
		resp, err := http.Post(rep.HTTP+"/v1/agents/reload", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if got := answer(); got != "v1 says hi" {
		t.Fatalf("before the reload: %q", got)
	}
	write(greeterSpec(v2, "  - name: other\n    model: {name: openai-compatible:m, base_url: "+v2+"/v1}\n"))
	code, body := reload()
	var rr reloadReport
	if code != http.StatusOK || json.Unmarshal([]byte(body), &rr) != nil || fmt.Sprint(rr.Changed, rr.Added) != "[greeter] [other]" {
		t.Fatalf("reload: %d %s", code, body)
	}
	if got := answer(); got != "v2 says hi" {
		t.Errorf("after the reload: %q", got)
	}
	write(greeterSpec(v3, "    approval_required: [nothing_matches]\n"))
	code, body = reload()
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "reload_failed") || !strings.Contains(body, "agents.yaml:5: agents[0].approval_required") {
		t.Errorf("a failing file: %d %s", code, body)
	}
	if got := answer(); got != "v2 says hi" {
		t.Errorf("after a failed reload: %q, want v2 unchanged", got)
	}
	write(greeterSpec(v3, ""))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if got := answer(); got == "v3 says hi" {
			break
		} else if i == 100 {
			t.Fatalf("after SIGHUP: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
