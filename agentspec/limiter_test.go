package agentspec

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// Every model of a provider shares the file's one limiter of that
// provider: with a budget of one request a minute, agent a's request
// uses it up and agent b's then waits (until its context ends), while a
// provider without a rate limit is not held back.
func TestRateLimitSharedPerProvider(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer hs.Close()
	t.Setenv("AGENTSPEC_L_KEY", "x")
	spec := fmt.Sprintf(`version: 1
rate_limits:
  openai-compatible: {requests_per_minute: 1}
agents:
  - name: a
    model: {name: 'openai-compatible:m', base_url: '%[1]s/v1', retry: {max_attempts: 1}}
  - name: b
    model: {name: 'openai-compatible:n', base_url: '%[1]s/v1', retry: {max_attempts: 1}}
  - name: c
    model: {name: 'openai:o', base_url: '%[1]s/v1', api_key_env: AGENTSPEC_L_KEY, retry: {max_attempts: 1}}
`, hs.URL)
	f, err := Parse("agents.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	b := &builder{f: f, h: &Hosted{}, limiters: map[string]*resilient.Limiter{}}
	ask := func(i int) error {
		m, err := b.model(fmt.Sprintf("agents[%d].model", i), f.Agents[i].Model)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, err = m.Request(ctx, &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}})
		return err
	}
	if err := ask(0); err != nil {
		t.Fatalf("agent a's first request: %v", err)
	}
	if err := ask(1); err == nil {
		t.Error("agent b's request went through: the limiter is not shared with agent a")
	}
	if err := ask(2); err != nil {
		t.Errorf("agent c (another provider, no limit): %v", err)
	}
}
