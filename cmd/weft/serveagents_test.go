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
	"testing"
)

// serve --agents FILE hosts the agents a spec file declares beside the
// demo's: the report names them, and a run of one, started over the HTTP
// API, is answered by the model the file names (an OpenAI-compatible
// server here, its key named by variable).
func TestServeAgentsFile(t *testing.T) {
	var auth []string
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"Hello from ", "the spec."} {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%q},\"finish_reason\":null}]}\n\n", piece)
		}
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer model.Close()
	t.Setenv("SPEC_TEST_KEY", "sk-spec-test-0123456789")
	dir := t.TempDir()
	spec := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(spec, []byte(`version: 1
agents:
  - name: greeter
    model:
      name: openai-compatible:m
      base_url: `+model.URL+`/v1
      api_key_env: SPEC_TEST_KEY
    instructions: [Greet.]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, done, stop := serveInBackground(t, "serve", "--agents", spec, "--listen", "127.0.0.1:-1", "--json", "--http", "127.0.0.1:0")
	first, _, _ := strings.Cut(stdout.waitFor(t, t.Context(), done, "\n"), "\n")
	rep := decodeJSON[serveReport](t, first)
	if strings.Join(rep.Agents, ",") != demoAgent+",greeter" {
		t.Fatalf("agents %v, want the demo's and greeter", rep.Agents)
	}
	post := func(path, body string) map[string]any {
		t.Helper()
		resp, err := http.Post(rep.HTTP+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil || resp.StatusCode >= 300 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return v
	}
	started := post("/v1/runs", `{"agent":"greeter","prompt":"hi"}`)
	resp, err := http.Get(fmt.Sprintf("%s/v1/sessions/%s/runs/%s?wait=30s", rep.HTTP, started["session_id"], started["run_id"]))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "Hello from the spec.") || !strings.Contains(string(b), "completed") {
		t.Errorf("the run: %s", b)
	}
	if len(auth) == 0 || auth[0] != "Bearer sk-spec-test-0123456789" {
		t.Errorf("the model server got Authorization %q", auth)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
