package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/weft-run/weft/llm"
)

// providerError is the cause a *llm.ModelError carries for an error the
// provider reported: its message, with secrets and prompt text taken out.
// The SDK's own error is not kept: it holds the HTTP request, headers and
// all.
type providerError struct{ msg string }

func (e *providerError) Error() string { return e.msg }

// maxMessage bounds the provider message kept in an error.
const maxMessage = 300

// fail wraps err, a failure of a request that never reached the
// provider or whose cause is not an API error, as a *llm.ModelError.
func (m *Model) fail(err error) *llm.ModelError {
	return m.failRequest(context.Background(), nil, nil, err)
}

// failRequest turns any failure of a request for req into a
// *llm.ModelError: an API error (status, type, code, Retry-After), an
// error event in a stream, a malformed answer, a connection error, or the
// end of ctx. Secrets and prompt text never reach its text.
//
// raw is the HTTP answer when there was one: an error status whose body the
// SDK could not read as OpenAI's error object (Ollama's {"error": "..."},
// a proxy's HTML) is still an answer with a status.
func (m *Model) failRequest(ctx context.Context, req *llm.Request, raw *http.Response, err error) *llm.ModelError {
	me := &llm.ModelError{Provider: m.provider, Model: m.id}
	if me2, ok := errors.AsType[*llm.ModelError](err); ok {
		return me2
	}
	var apiErr *openai.Error
	var streamErr *ssestream.StreamError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var failure *streamFailure
	switch {
	case ctx.Err() != nil:
		me.Err = ctx.Err()
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		me.Err = err
	case errors.As(err, &apiErr):
		me.StatusCode = apiErr.StatusCode
		me.Type, me.Code = apiErr.Type, apiErr.Code
		me.Err = &providerError{msg: m.redact(req, apiErr.Message, apiErr.StatusCode)}
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		me.Retryable = retryableStatus(apiErr.StatusCode, apiErr.Code, h)
		me.RetryAfter = retryAfter(h, time.Now())
	case raw != nil && raw.StatusCode >= 400:
		me.StatusCode = raw.StatusCode
		var msg string
		me.Type, me.Code, msg = lenientError(raw)
		me.Err = &providerError{msg: m.redact(req, msg, raw.StatusCode)}
		me.Retryable = retryableStatus(raw.StatusCode, me.Code, raw.Header)
		me.RetryAfter = retryAfter(raw.Header, time.Now())
	case errors.As(err, &streamErr):
		var body struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(streamErr.Event.Data, &body)
		me.Type = body.Error.Type
		if body.Error.Code != nil {
			me.Code = strings.Trim(string(mustJSON(body.Error.Code)), `"`)
		}
		me.Err = &providerError{msg: "error in stream: " + m.redact(req, body.Error.Message, 0)}
		me.Retryable = retryableType(me.Type) || retryableType(me.Code)
	case errors.As(err, &failure):
		me.Type, me.Code = failure.typ, failure.code
		me.Err = &providerError{msg: "error in answer: " + m.redact(req, failure.msg, 0)}
		me.Retryable = retryableType(me.Type) || retryableType(me.Code)
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr), errors.Is(err, ErrMalformedResponse):
		me.Err = wrapMalformed(err)
	case errors.Is(err, ErrStrictSchema), errors.Is(err, ErrUnsupported), errors.Is(err, llm.ErrNilRequest):
		me.Err = err
	default:
		// A transport failure: refused, reset or cut connection, a
		// timeout, a body that ended early.
		me.Err = &providerError{msg: m.redact(req, err.Error(), 0)}
		if isConnectionError(err) {
			me.Err = &connectionError{msg: me.Err.Error(), err: err}
			me.Retryable = true
		}
	}
	return me
}

// lenientError reads an error body that is not OpenAI's error object:
// {"error": "text"}, {"error": {...}} with odd field types, or
// {"message": "text"}; nothing for anything else.
func lenientError(raw *http.Response) (typ, code, msg string) {
	if raw.Body == nil {
		return "", "", ""
	}
	b, _ := io.ReadAll(io.LimitReader(raw.Body, 64<<10))
	var body map[string]any
	if json.Unmarshal(b, &body) != nil {
		return "", "", ""
	}
	str := func(v any) string {
		switch v := v.(type) {
		case string:
			return v
		case nil:
			return ""
		}
		return string(mustJSON(v))
	}
	switch e := body["error"].(type) {
	case string:
		msg = e
	case map[string]any:
		return str(e["type"]), str(e["code"]), str(e["message"])
	}
	if m := str(body["message"]); m != "" {
		if msg != "" {
			msg += ": "
		}
		msg += m
	}
	return "", "", msg
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// connectionError is a transport failure; it unwraps to the cause (which
// may be io.ErrUnexpectedEOF or a syscall error) for errors.Is.
type connectionError struct {
	msg string
	err error
}

func (e *connectionError) Error() string { return e.msg }
func (e *connectionError) Unwrap() error { return e.err }

func wrapMalformed(err error) error {
	if errors.Is(err, ErrMalformedResponse) {
		return err
	}
	return &malformedError{err: err}
}

type malformedError struct{ err error }

func (e *malformedError) Error() string { return ErrMalformedResponse.Error() + ": " + e.err.Error() }
func (e *malformedError) Unwrap() []error {
	return []error{ErrMalformedResponse, e.err}
}

func isConnectionError(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) ||
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe")
}

// retryableStatus says whether an answer with this status may succeed
// when sent again: 408, 409, 429 and 5xx may (except a 429 for an
// exhausted quota, which waiting does not cure); 400, 401, 403, 404, 422
// and the rest of 4xx do not. A server's x-should-retry header, where it
// sends one, decides instead.
func retryableStatus(status int, code string, h http.Header) bool {
	switch h.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	switch {
	case status == http.StatusTooManyRequests:
		return code != "insufficient_quota"
	case status == http.StatusRequestTimeout, status == http.StatusConflict:
		return true
	case status >= 500:
		return true
	}
	return false
}

// retryableType says whether an error event's type or code names a
// transient condition.
func retryableType(t string) bool {
	for _, s := range []string{"server_error", "rate_limit", "overloaded", "timeout", "unavailable"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// retryAfter reads how long the server asked to wait: retry-after-ms
// (OpenAI's, in milliseconds), else Retry-After in seconds or as an HTTP
// date (relative to now). 0 when absent, unparsable or in the past.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// keyPattern matches API keys as providers echo them ("Incorrect API key
// provided: sk-abc***xyz").
var keyPattern = regexp.MustCompile(`\b(sk|rk|sess)-[A-Za-z0-9_*.\-]{4,}`)

// wordPattern matches the words of a message, as redact checks them.
var wordPattern = regexp.MustCompile(`[^\s"'(),;:<>\[\]{}]+`)

// secretRun is how many bytes in a row a word must share with a secret to
// be taken for a quote of it.
const secretRun = 8

// sharesRun reports whether w and secret have n bytes in a row in common.
func sharesRun(w, secret string, n int) bool {
	if len(w) < n || len(secret) < n {
		return false
	}
	for i := 0; i+n <= len(secret); i++ {
		if strings.Contains(w, secret[i:i+n]) {
			return true
		}
	}
	return false
}

// redact returns msg without the model's key and header values, anything
// shaped like a key, or a prompt text of req it quotes, cut to maxMessage
// bytes; a generic text for the status when msg is empty.
func (m *Model) redact(req *llm.Request, msg string, status int) string {
	for _, s := range m.secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	// A provider may quote a secret in part ("sk-proj-****abcd", the key
	// without its prefix): a word sharing 8 bytes in a row with one goes.
	msg = wordPattern.ReplaceAllStringFunc(msg, func(w string) string {
		for _, s := range m.secrets {
			if sharesRun(w, s, secretRun) {
				return "[redacted]"
			}
		}
		return w
	})
	msg = llm.ScrubQuotes(req, keyPattern.ReplaceAllString(msg, "[redacted key]"), maxMessage)
	if msg == "" {
		if status != 0 {
			return http.StatusText(status)
		}
		return "no message"
	}
	return msg
}
