package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/weft-run/weft/llm"
)

// Sentinel errors, inside the *llm.ModelError every failure is.
var (
	// ErrNoAPIKey: New found no key in WithAPIKey, or in
	// ANTHROPIC_API_KEY for the endpoint the environment names.
	ErrNoAPIKey = errors.New("anthropic: no API key (pass WithAPIKey, or set " + EnvAPIKey + " for the default endpoint)")
	// ErrNoModelID: New was given an empty model id.
	ErrNoModelID = errors.New("anthropic: no model id")
	// ErrInvalidOption: an option's value is out of range.
	ErrInvalidOption = errors.New("anthropic: invalid option")
	// ErrUnsupportedSetting: the request sets temperature, top_p or seed,
	// which the Messages API does not take (see WithIgnoreUnsupportedSettings).
	ErrUnsupportedSetting = errors.New("anthropic: setting not supported by the Messages API")
	// ErrInvalidSetting: a negative max_tokens, or a provider setting
	// that is not JSON.
	ErrInvalidSetting = errors.New("anthropic: invalid setting")
	// ErrInvalidTool: a tool's parameters schema is not JSON.
	ErrInvalidTool = errors.New("anthropic: invalid tool definition")
	// ErrStrictSchema: a strict tool's schema has no strict form (see
	// the package documentation).
	ErrStrictSchema = errors.New("anthropic: tool schema cannot be made strict")
	// ErrStreamingRequired: a non-streamed Request with a max_tokens so
	// large that the SDK requires streaming; use Stream.
	ErrStreamingRequired = errors.New("anthropic: max_tokens too large for a non-streamed request; stream it")
	// ErrAPI: the API answered with an error (its status, type and
	// message are in the *llm.ModelError).
	ErrAPI = errors.New("anthropic: API error")
	// ErrMalformedStream: an event of the stream could not be decoded or
	// broke the order of the Messages streaming protocol.
	ErrMalformedStream = errors.New("anthropic: malformed stream")
)

// modelError wraps a failure found before or after the exchange (nothing
// to retry: the same request fails the same way).
func (m *Model) modelError(err error) *llm.ModelError {
	return &llm.ModelError{Provider: Provider, Model: m.id, Err: m.redact(err)}
}

// fail maps an error of the SDK's HTTP exchange onto a *llm.ModelError.
//
// An API error (an error status, or an error event in a stream) carries
// the status (0 for an event in a stream that had started), the API's
// error type and its message; it is retryable on 408, 429, 5xx and 529,
// or, in a stream, on the types rate_limit_error, overloaded_error,
// api_error and timeout_error, unless the API's x-should-retry header says
// otherwise. RetryAfter is the Retry-After header. A context that ended is
// not retryable; any other failure of the connection is. The SDK's error
// is not kept (it holds the request and its headers): the text is rebuilt,
// and the key and header values are redacted from it; so is any text of
// the request the API's message quotes (see redactMessage).
func (m *Model) fail(ctx context.Context, req *llm.Request, err error) *llm.ModelError {
	if ctx.Err() != nil {
		return &llm.ModelError{Provider: Provider, Model: m.id, Err: m.redact(err)}
	}
	var api *sdk.Error
	if !errors.As(err, &api) {
		return &llm.ModelError{Provider: Provider, Model: m.id, Retryable: true, Err: m.redact(err)}
	}
	me := &llm.ModelError{Provider: Provider, Model: m.id, Type: m.redactText(string(api.Type()))}
	if code := string(api.ErrorCode()); code != "" {
		me.Code = m.redactText(code)
	}
	var header http.Header
	if api.Response != nil {
		header = api.Response.Header
	}
	if api.StatusCode >= 400 {
		me.StatusCode = api.StatusCode
	}
	me.Retryable = retryable(me.StatusCode, me.Type, header)
	me.RetryAfter = retryAfter(header, time.Now())
	msg := api.Message
	if msg == "" {
		msg = http.StatusText(api.StatusCode)
	}
	me.Err = fmt.Errorf("%w: %s", ErrAPI, m.redactMessage(req, msg))
	return me
}

var retryableTypes = map[string]bool{
	"rate_limit_error": true, "overloaded_error": true, "api_error": true, "timeout_error": true,
}

func retryable(status int, typ string, h http.Header) bool {
	if status == 0 {
		// An error event: the headers are those of the stream that had
		// started, and say nothing about it.
		return retryableTypes[typ]
	}
	switch h.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	return status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// retryAfter reads Retry-After (seconds, or an HTTP date); 0 when absent.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// redacted is an error whose text had the model's secrets removed. It
// does not unwrap to the error it replaces (whose text holds a secret),
// only to the context's error when that is the cause, so errors.Is still
// sees context.Canceled through it.
type redacted struct {
	text  string
	cause error // nil, context.Canceled or context.DeadlineExceeded
}

func (e *redacted) Error() string { return e.text }
func (e *redacted) Unwrap() error { return e.cause }

// redactMin is the shortest secret redacted: a shorter header value would
// blank out ordinary words of the message.
const redactMin = 4

// redactText removes the API key and the header values from s.
func (m *Model) redactText(s string) string {
	for _, secret := range m.secrets {
		if len(secret) >= redactMin {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

// keyPattern matches an Anthropic API key, whoever's it is.
var keyPattern = regexp.MustCompile(`sk-ant-[A-Za-z0-9_\-]{4,}`)

// maxMessage bounds the API's message kept in an error, in bytes.
const maxMessage = 300

// redactMessage cleans an error message the API sent: the key and header
// values, anything shaped like an Anthropic key, and every text of req
// (instructions, prompts, answers, tool arguments and returns) of at least
// llm.MinQuotedText bytes that it quotes; then it is cut to maxMessage
// bytes (llm.ScrubQuotes).
func (m *Model) redactMessage(req *llm.Request, msg string) string {
	return llm.ScrubQuotes(req, keyPattern.ReplaceAllString(m.redactText(msg), "[redacted key]"), maxMessage)
}

// redact returns err itself when its text holds no secret, and a redacted
// copy otherwise.
func (m *Model) redact(err error) error {
	text := err.Error()
	clean := m.redactText(text)
	if clean == text {
		return err
	}
	r := &redacted{text: clean}
	for _, c := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, c) {
			r.cause = c
		}
	}
	return r
}
