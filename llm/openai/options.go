package openai

import (
	"net/http"
)

// API says which of OpenAI's HTTP APIs a Model speaks. It is a closed set:
// ChatCompletions and Responses.
type API int

// The APIs a Model can speak.
const (
	// ChatCompletions is POST /chat/completions, the API every
	// OpenAI-compatible server speaks (Ollama, vLLM, llama.cpp server,
	// LM Studio, OpenRouter, Azure OpenAI). It is the default.
	ChatCompletions API = iota
	// Responses is POST /responses, OpenAI's newer API.
	Responses
)

// String returns "chat_completions" or "responses".
func (a API) String() string {
	switch a {
	case ChatCompletions:
		return "chat_completions"
	case Responses:
		return "responses"
	}
	return "unknown"
}

// Option configures a Model made by New.
type Option func(*config)

// config is what the options set.
type config struct {
	apiKey     string
	apiKeySet  bool
	baseURL    string
	headers    [][2]string
	org        string
	project    string
	api        API
	httpClient *http.Client
	provider   string
	noStream   bool
}

// WithAPIKey sets the API key, sent as "Authorization: Bearer KEY". Without
// it New reads OPENAI_API_KEY, but only for OpenAI's own endpoint: a key
// for a custom base URL must be given with this option, so that an OpenAI
// key in the environment never reaches another server.
func WithAPIKey(key string) Option {
	return func(c *config) { c.apiKey, c.apiKeySet = key, true }
}

// WithBaseURL sets the endpoint, e.g. "http://localhost:11434/v1" for
// Ollama; the default is "https://api.openai.com/v1/". A custom base URL
// may go without an API key, and its models are named
// "openai-compatible:<id>" unless WithProviderName says otherwise.
func WithBaseURL(url string) Option {
	return func(c *config) { c.baseURL = url }
}

// WithHeader adds a header sent with every request (e.g. "api-key" for
// Azure, "HTTP-Referer" for OpenRouter). A later call with the same name
// replaces the value. Header values never appear in errors.
func WithHeader(name, value string) Option {
	return func(c *config) { c.headers = append(c.headers, [2]string{name, value}) }
}

// WithOrganization sets the OpenAI-Organization header.
func WithOrganization(org string) Option {
	return func(c *config) { c.org = org }
}

// WithProject sets the OpenAI-Project header.
func WithProject(project string) Option {
	return func(c *config) { c.project = project }
}

// WithAPI chooses the API: ChatCompletions (the default) or Responses.
func WithAPI(api API) Option {
	return func(c *config) { c.api = api }
}

// WithHTTPClient sets the HTTP client; the default is one of its own over
// a clone of http.DefaultTransport that waits at most 10 minutes for
// response headers (the body of a stream has no limit but ctx).
func WithHTTPClient(client *http.Client) Option {
	return func(c *config) { c.httpClient = client }
}

// WithProviderName sets the provider part of the model's name, as the
// event log records it and as *llm.ModelError.Provider says it, e.g.
// "ollama" for "ollama:llama3". The default is "openai" for OpenAI's own
// endpoint and "openai-compatible" for any other base URL.
func WithProviderName(name string) Option {
	return func(c *config) { c.provider = name }
}

// WithoutStreaming makes Stream send an ordinary (non-streamed) request and
// yield its answer as one event, for servers whose streaming is missing or
// incomplete (some stream text but not tool calls).
func WithoutStreaming() Option {
	return func(c *config) { c.noStream = true }
}
