package anthropic

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/weft-run/weft/llm"
)

// TestLive talks to the real API. It runs only with ANTHROPIC_API_KEY set;
// ANTHROPIC_LIVE_MODEL chooses the model (default claude-haiku-4-5).
func TestLive(t *testing.T) {
	if os.Getenv(EnvAPIKey) == "" {
		t.Skip("set ANTHROPIC_API_KEY to run the live test against the Anthropic API")
	}
	id := os.Getenv("ANTHROPIC_LIVE_MODEL")
	if id == "" {
		id = "claude-haiku-4-5"
	}
	m, err := New(id, WithMaxTokens(256))
	if err != nil {
		t.Fatal(err)
	}
	tool := llm.ToolDefinition{
		Name: "get_weather", Description: "Current weather of a city.", Strict: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}
	req := &llm.Request{
		Instructions: "Use the get_weather tool to answer questions about the weather.",
		Messages:     []llm.Message{llm.UserMessage("What is the weather in Paris?")},
		Tools:        []llm.ToolDefinition{tool},
	}
	t.Run("request with a tool", func(t *testing.T) {
		resp, err := m.Request(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.FinishReason != llm.FinishToolCalls || len(resp.ToolCalls) == 0 || resp.ToolCalls[0].Name != "get_weather" {
			t.Fatalf("response %+v, want a get_weather call", resp)
		}
		if resp.Usage.InputTokens == 0 || resp.Model != "anthropic:"+id {
			t.Errorf("usage %+v, model %q", resp.Usage, resp.Model)
		}
		// Answer the call and stream the model's text.
		next := req.Clone()
		next.Messages = append(next.Messages, resp.Message(), llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
			llm.ToolReturn{CallID: resp.ToolCalls[0].ID, Name: "get_weather", Content: llm.TextContent("18°C, clear sky")},
		}})
		var text strings.Builder
		var final *llm.Response
		for ev, err := range m.Stream(t.Context(), next) {
			if err != nil {
				t.Fatal(err)
			}
			text.WriteString(ev.TextDelta)
			if ev.Response != nil {
				final = ev.Response
			}
		}
		if final == nil || final.Text != text.String() || !strings.Contains(final.Text, "18") {
			t.Errorf("streamed %q, final %+v", text.String(), final)
		}
	})
	t.Run("bad key", func(t *testing.T) {
		bad, err := New(id, WithAPIKey("sk-ant-invalid-key-for-the-live-test"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = bad.Request(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserMessage("Hi")}})
		var me *llm.ModelError
		if !errors.As(err, &me) {
			t.Fatalf("bad key: %v, want a *llm.ModelError", err)
		}
		if me.Provider != Provider || me.Model != id || me.StatusCode != 401 || me.Retryable || strings.Contains(err.Error(), "sk-ant-invalid") {
			t.Errorf("bad key: %v (status %d, retryable %v)", err, me.StatusCode, me.Retryable)
		}
	})
}
