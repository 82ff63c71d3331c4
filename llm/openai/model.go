package openai

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/weft-run/weft/llm"
)

// DefaultBaseURL is OpenAI's own endpoint, the default of WithBaseURL.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Provider names a Model reports unless WithProviderName sets another.
const (
	ProviderOpenAI     = "openai"
	ProviderCompatible = "openai-compatible"
)

// Model is an llm.Model (and llm.Streamer and llm.Named) on OpenAI's API
// or an OpenAI-compatible server. It is safe for concurrent use.
//
// It makes exactly one HTTP request per Request or Stream: the SDK's own
// retries are off, so that retrying is the job of one composable wrapper
// (llm/resilient) that sees and records every attempt.
type Model struct {
	id       string
	provider string
	name     string
	api      API
	stream   bool
	// maxTokens is the body field Settings.MaxTokens goes to on Chat
	// Completions: max_completion_tokens on OpenAI (where max_tokens is
	// deprecated and refused by reasoning models), max_tokens elsewhere
	// (what every compatible server reads).
	maxTokens string
	chat      openai.ChatCompletionService
	responses responses.ResponseService
	// secrets are the key and header values, kept out of error texts.
	secrets []string
	strict  *strictCache
}

var (
	_ llm.Model    = (*Model)(nil)
	_ llm.Streamer = (*Model)(nil)
	_ llm.Named    = (*Model)(nil)
)

// New returns a Model for modelID (e.g. "gpt-4.1-mini", or "llama3" on an
// Ollama base URL). The API key is WithAPIKey's or, for OpenAI's own
// endpoint only, OPENAI_API_KEY; no other environment variable is read.
// New fails with ErrNoAPIKey when OpenAI's own endpoint has no key, and
// with ErrBadConfig for an empty model id or an unusable base URL.
func New(modelID string, opts ...Option) (*Model, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if modelID == "" {
		return nil, fmt.Errorf("%w: empty model id", ErrBadConfig)
	}
	if c.api != ChatCompletions && c.api != Responses {
		return nil, fmt.Errorf("%w: unknown API %d", ErrBadConfig, c.api)
	}
	base := c.baseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: base URL is not an http(s) URL", ErrBadConfig)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/" // the SDK resolves paths against it
	}
	official := u.Hostname() == "api.openai.com"
	key := c.apiKey
	if !c.apiKeySet && official {
		key = os.Getenv("OPENAI_API_KEY")
	}
	if official && key == "" {
		return nil, ErrNoAPIKey
	}
	m := &Model{id: modelID, api: c.api, stream: !c.noStream, provider: c.provider, maxTokens: "max_tokens", strict: &strictCache{}}
	if official {
		m.maxTokens = "max_completion_tokens"
	}
	if m.provider == "" {
		m.provider = ProviderCompatible
		if official {
			m.provider = ProviderOpenAI
		}
	}
	m.name = m.provider + ":" + modelID
	hc := c.httpClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	// No option.WithEnvironment...: the services below are built without
	// openai.NewClient, which would read OPENAI_BASE_URL, OPENAI_ORG_ID,
	// OPENAI_ADMIN_KEY and more from the environment behind our back.
	ropts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if key != "" {
		ropts = append(ropts, option.WithAPIKey(key))
		m.secrets = append(m.secrets, key)
	}
	if c.org != "" {
		ropts = append(ropts, option.WithOrganization(c.org))
		m.secrets = append(m.secrets, c.org)
	}
	if c.project != "" {
		ropts = append(ropts, option.WithProject(c.project))
		m.secrets = append(m.secrets, c.project)
	}
	for _, h := range c.headers {
		ropts = append(ropts, option.WithHeader(h[0], h[1]))
		if h[1] != "" {
			m.secrets = append(m.secrets, h[1])
		}
	}
	m.chat = openai.NewChatCompletionService(ropts...)
	m.responses = responses.NewResponseService(ropts...)
	return m, nil
}

func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		return &http.Client{Transport: t}
	}
	return &http.Client{Transport: http.DefaultTransport}
}

// ModelName returns "<provider>:<model id>", e.g. "openai:gpt-4.1-mini" or
// "ollama:llama3"; every Response.Model the model returns carries it.
func (m *Model) ModelName() string { return m.name }

// API returns the API the model speaks.
func (m *Model) API() API { return m.api }

// Request sends req and waits for the whole answer. Every failure is a
// *llm.ModelError (see the package doc, "Errors").
func (m *Model) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if req == nil {
		return nil, m.fail(llm.ErrNilRequest)
	}
	if err := ctx.Err(); err != nil {
		return nil, m.fail(err)
	}
	if m.api == Responses {
		return m.responsesRequest(ctx, req)
	}
	return m.chatRequest(ctx, req)
}

// Stream sends req as a streamed request and yields the answer's deltas;
// the last event carries the complete Response. See llm.Streamer for the
// rules, and the package doc for what each API streams.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	if !m.stream {
		return llm.Stream(ctx, requestOnly{m}, req)
	}
	return func(yield func(llm.StreamEvent, error) bool) {
		if req == nil {
			yield(llm.StreamEvent{}, m.fail(llm.ErrNilRequest))
			return
		}
		if err := ctx.Err(); err != nil {
			yield(llm.StreamEvent{}, m.fail(err))
			return
		}
		if m.api == Responses {
			m.responsesStream(ctx, req, yield)
			return
		}
		m.chatStream(ctx, req, yield)
	}
}

// requestOnly hides Model's Streamer role from llm.Stream.
type requestOnly struct{ m *Model }

func (r requestOnly) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return r.m.Request(ctx, req)
}
