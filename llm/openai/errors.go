package openai

import (
	"errors"
	"fmt"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrNoAPIKey is returned by New for OpenAI's own endpoint without an
	// API key (neither WithAPIKey nor OPENAI_API_KEY).
	ErrNoAPIKey = errors.New("openai: no API key: set OPENAI_API_KEY or pass WithAPIKey")
	// ErrBadConfig is returned by New for an unusable option.
	ErrBadConfig = errors.New("openai: bad config")
	// ErrStrictSchema reports a strict tool whose parameter schema cannot be
	// converted to OpenAI's strict dialect; *SchemaError matches it. The
	// request is not sent.
	ErrStrictSchema = errors.New("openai: schema cannot be made strict")
	// ErrUnsupported reports a request the chosen API cannot express (a
	// setting it lacks, a reserved provider setting). The request is not
	// sent.
	ErrUnsupported = errors.New("openai: unsupported request")
	// ErrMalformedResponse reports an answer or stream chunk that is not
	// what the API documents (not JSON, no choices, a stream that ended
	// without finishing).
	ErrMalformedResponse = errors.New("openai: malformed response")
)

// SchemaError says which strict tool's schema could not be converted, where
// in the schema (a JSON pointer) and why. It matches ErrStrictSchema.
type SchemaError struct {
	Tool    string
	Pointer string
	Reason  string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("openai: tool %q: schema at %q cannot be made strict: %s", e.Tool, e.Pointer, e.Reason)
}

// Is reports whether target is ErrStrictSchema.
func (e *SchemaError) Is(target error) bool { return target == ErrStrictSchema }
