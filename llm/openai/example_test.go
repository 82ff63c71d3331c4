package openai_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/openai"
)

// A model on an OpenAI-compatible server (here a stand-in answering as
// Ollama would), named for the log as "ollama:llama3".
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"llama3","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`)
	}))
	defer srv.Close()

	model, err := openai.New("llama3", openai.WithBaseURL(srv.URL+"/v1"), openai.WithProviderName("ollama"))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := model.Request(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserMessage("Say hello")}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Model, resp.Text, resp.FinishReason, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output:
	// ollama:llama3 Hello! stop 9 2
}

// A strict tool's schema as OpenAI's strict mode gets it: closed, every
// property required, the optional ones nullable.
func ExampleStrictSchema() {
	s, err := openai.StrictSchema([]byte(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","default":1}},"required":["city"]}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(s))
	// Output:
	// {"additionalProperties":false,"properties":{"city":{"type":"string"},"days":{"type":["integer","null"]}},"required":["city","days"],"type":"object"}
}
