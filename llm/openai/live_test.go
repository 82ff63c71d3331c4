package openai_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/openai"
)

// liveModel is OPENAI_LIVE_MODEL, or gpt-4.1-mini.
func liveModel() string {
	if m := os.Getenv("OPENAI_LIVE_MODEL"); m != "" {
		return m
	}
	return "gpt-4.1-mini"
}

// The real API, both APIs, streamed and not, with a strict tool. It runs
// only with OPENAI_API_KEY set.
func TestLive(t *testing.T) {
	if os.Getenv("OPENAI_API_KEY") == "" {
		t.Skip("set OPENAI_API_KEY to run the live tests against the real OpenAI API (OPENAI_LIVE_MODEL picks the model)")
	}
	tool := llm.ToolDefinition{Name: "get_weather", Description: "Current weather of a city.", Strict: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}`)}
	for _, api := range []openai.API{openai.ChatCompletions, openai.Responses} {
		t.Run(api.String(), func(t *testing.T) {
			m, err := openai.New(liveModel(), openai.WithAPI(api))
			if err != nil {
				t.Fatal(err)
			}
			req := &llm.Request{
				Instructions: "Use the tool to answer.",
				Messages:     []llm.Message{llm.UserMessage("What is the weather in Paris?")},
				Tools:        []llm.ToolDefinition{tool},
				Settings:     llm.Settings{MaxTokens: 200},
			}
			resp, err := llm.Collect(m.Stream(t.Context(), req))
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.ToolCalls) == 0 || resp.ToolCalls[0].Name != "get_weather" || resp.Usage.InputTokens == 0 {
				t.Fatalf("response = %+v", resp)
			}
			call := resp.ToolCalls[0]
			req.Messages = append(req.Messages, resp.Message(), llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
				llm.ToolReturn{CallID: call.ID, Name: call.Name, Content: llm.TextContent("sunny, 21 C")},
			}})
			final, err := m.Request(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.ToLower(final.Text), "sunny") || final.Model != m.ModelName() {
				t.Errorf("final = %+v", final)
			}
		})
	}
}
