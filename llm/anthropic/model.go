package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/weft-run/weft/llm"
)

// Provider is the provider name the model's errors and name carry.
const Provider = "anthropic"

// The environment variables New reads when no option sets the value.
const (
	EnvAPIKey  = "ANTHROPIC_API_KEY"
	EnvBaseURL = "ANTHROPIC_BASE_URL"
)

// Model is an Anthropic model reached through the Messages API. It
// implements llm.Model, llm.Streamer and llm.Named, and is safe for
// concurrent use.
type Model struct {
	id, name          string
	client            sdk.Client
	maxTokens         int
	ignoreUnsupported bool
	secrets           []string // the key and header values, redacted from errors
}

var (
	_ llm.Model    = (*Model)(nil)
	_ llm.Streamer = (*Model)(nil)
	_ llm.Named    = (*Model)(nil)
)

// New returns the Anthropic model modelID (e.g. "claude-sonnet-4-5"). The
// API key comes from WithAPIKey or else ANTHROPIC_API_KEY; without one New
// fails with a *llm.ModelError matching ErrNoAPIKey. The base URL comes
// from WithBaseURL or else ANTHROPIC_BASE_URL; no other environment
// variable, credential file or profile of the SDK is consulted.
//
// The SDK's own retries are disabled: every Request or Stream sends one
// HTTP request, and a failure comes back at once as a *llm.ModelError that
// says whether it is retryable. Retries, fallbacks and rate limits are the
// job of the wrappers in llm/resilient.
func New(modelID string, opts ...Option) (*Model, error) {
	cfg := config{maxTokens: DefaultMaxTokens}
	for _, o := range opts {
		o(&cfg)
	}
	name := Provider + ":" + modelID
	if strings.TrimSpace(modelID) == "" {
		return nil, &llm.ModelError{Provider: Provider, Model: modelID, Err: ErrNoModelID}
	}
	if cfg.apiKey == "" {
		cfg.apiKey = os.Getenv(EnvAPIKey)
	}
	if cfg.apiKey == "" {
		return nil, &llm.ModelError{Provider: Provider, Model: modelID, Err: ErrNoAPIKey}
	}
	if cfg.baseURL == "" {
		cfg.baseURL = os.Getenv(EnvBaseURL)
	}
	if cfg.maxTokens <= 0 {
		return nil, &llm.ModelError{Provider: Provider, Model: modelID, Err: fmt.Errorf("%w: WithMaxTokens(%d)", ErrInvalidOption, cfg.maxTokens)}
	}
	if cfg.httpClient == nil {
		cfg.httpClient = defaultHTTPClient()
	}
	sdkOpts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.apiKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(cfg.httpClient),
	}
	if cfg.baseURL != "" {
		sdkOpts = append(sdkOpts, option.WithBaseURL(cfg.baseURL))
	}
	secrets := []string{cfg.apiKey}
	for _, h := range cfg.headers {
		sdkOpts = append(sdkOpts, option.WithHeader(h[0], h[1]))
		secrets = append(secrets, h[1])
	}
	return &Model{
		id: modelID, name: name,
		client:            sdk.NewClient(sdkOpts...),
		maxTokens:         cfg.maxTokens,
		ignoreUnsupported: cfg.ignoreUnsupported,
		secrets:           secrets,
	}, nil
}

// defaultHTTPClient is what the SDK would use: a clone of the default
// transport that waits at most ten minutes for response headers.
func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		return &http.Client{Transport: t}
	}
	return &http.Client{Transport: http.DefaultTransport}
}

// ModelName returns "anthropic:<model id>", the name the event log records
// and every Response.Model carries.
func (m *Model) ModelName() string { return m.name }

// Request sends req to the Messages API as one non-streamed request and
// blocks until the whole message is there or ctx is done. A request whose
// max_tokens is too large to be answered within ten minutes without
// streaming fails with ErrStreamingRequired before anything is sent: use
// Stream (llm.Stream) for it. Errors are *llm.ModelError; see the package
// documentation for what they carry.
func (m *Model) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, err := m.encode(req)
	if err != nil {
		return nil, err
	}
	if _, err := sdk.CalculateNonStreamingTimeout(int(params.MaxTokens), params.Model, nil); err != nil {
		return nil, m.modelError(fmt.Errorf("%w: max_tokens %d", ErrStreamingRequired, params.MaxTokens))
	}
	msg, err := m.client.Messages.New(ctx, params)
	if err != nil {
		return nil, m.fail(ctx, err)
	}
	resp, err := m.decode(msg)
	if err != nil {
		return nil, m.modelError(err)
	}
	return resp, nil
}
