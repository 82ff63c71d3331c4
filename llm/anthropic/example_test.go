package anthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/anthropic"
)

// A server standing in for the Messages API, so that the example runs
// without a key or a network.
func fakeAPI() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Bonjour\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" !\"}}\n\n"+
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4}}\n\n"+
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
}

func Example() {
	api := fakeAPI()
	defer api.Close()

	// In a program: anthropic.New("claude-sonnet-4-5"), the key from
	// ANTHROPIC_API_KEY.
	m, err := anthropic.New("claude-sonnet-4-5", anthropic.WithAPIKey("sk-ant-example"), anthropic.WithBaseURL(api.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &llm.Request{
		Instructions: "Answer in French.",
		Messages:     []llm.Message{llm.UserMessage("Say hello.")},
	}
	for ev, err := range llm.Stream(context.Background(), m, req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Response != nil {
			fmt.Printf("\n%s: %s, %d tokens in, %d out\n", ev.Response.Model, ev.Response.FinishReason, ev.Response.Usage.InputTokens, ev.Response.Usage.OutputTokens)
			continue
		}
		fmt.Print(ev.TextDelta)
	}
	// Output:
	// Bonjour !
	// anthropic:claude-sonnet-4-5: stop, 12 tokens in, 4 out
}
