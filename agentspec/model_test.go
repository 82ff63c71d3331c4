package agentspec_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	weft "github.com/weft-run/weft"
	"github.com/weft-run/weft/agentspec"
)

// The spec's retry policy and fallbacks wrap the model: a primary that
// keeps failing with a server error is asked max_attempts times, then the
// fallback answers.
func TestRetriesAndFallbacks(t *testing.T) {
	var failed atomic.Int32
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		failed.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	}))
	defer down.Close()
	up := httptest.NewServer(&chatServer{bodies: []string{"", ""}}) // its third answer: text
	defer up.Close()
	spec := fmt.Sprintf(`version: 1
agents:
  - name: support
    model:
      name: openai-compatible:primary
      base_url: %s/v1
      retry: {max_attempts: 3, initial_delay: 1ms, max_delay: 2ms, jitter: 0}
      fallbacks:
        - name: openai-compatible:secondary
          base_url: %s/v1
          retry: {max_attempts: 1}
`, down.URL, up.URL)
	f, err := agentspec.Parse("agents.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	rt := startRuntime(t)
	h, err := f.Register(t.Context(), rt, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	res, err := h.Agent("support").Run(t.Context(), "Hello.")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != weft.StatusCompleted || res.Output != "Ticket T-7 is noted." {
		t.Errorf("run: %s %q, want the fallback's answer", res.Status, res.Output)
	}
	if n := failed.Load(); n != 3 {
		t.Errorf("the primary was asked %d times, want max_attempts = 3", n)
	}
}
