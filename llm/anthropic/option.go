package anthropic

import "net/http"

// DefaultMaxTokens is the max_tokens a request is sent with when neither
// its Settings.MaxTokens nor WithMaxTokens sets one. The Messages API
// requires max_tokens on every request; 8192 leaves room for a long answer
// with tool calls and keeps a non-streamed request under the ten minutes
// past which the SDK insists on streaming (see ErrStreamingRequired).
const DefaultMaxTokens = 8192

// Option configures a Model; pass options to New.
type Option func(*config)

type config struct {
	apiKey, baseURL   string
	headers           [][2]string
	httpClient        *http.Client
	maxTokens         int
	ignoreUnsupported bool
}

// WithAPIKey sets the API key. Without it New reads ANTHROPIC_API_KEY. The
// key is sent as the request's bearer token and never appears in an error.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithBaseURL sets the API's base URL (default https://api.anthropic.com,
// or ANTHROPIC_BASE_URL when set), e.g. a proxy or a test server.
func WithBaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithHeader adds a header to every request, e.g. "anthropic-beta". A later
// WithHeader of the same name replaces the earlier one. Header values never
// appear in an error.
func WithHeader(name, value string) Option {
	return func(c *config) { c.headers = append(c.headers, [2]string{name, value}) }
}

// WithHTTPClient sets the HTTP client requests go through. The default is a
// client of its own on a clone of http.DefaultTransport that waits at most
// ten minutes for the response headers (a stream's body is not bounded).
func WithHTTPClient(client *http.Client) Option { return func(c *config) { c.httpClient = client } }

// WithMaxTokens sets the max_tokens of requests whose Settings.MaxTokens is
// 0; the default is DefaultMaxTokens.
func WithMaxTokens(n int) Option { return func(c *config) { c.maxTokens = n } }

// WithIgnoreUnsupportedSettings makes the model send requests that set
// Settings.Temperature, TopP or Seed without them, instead of failing them
// with ErrUnsupportedSetting. Use it when the same settings go to models of
// several providers (a fallback list) and a sampling hint may be lost.
func WithIgnoreUnsupportedSettings() Option { return func(c *config) { c.ignoreUnsupported = true } }
