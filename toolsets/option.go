package toolsets

import (
	"errors"
	"fmt"
	"maps"
	"time"
)

// Option configures a tool ([NewFunc], [NewContextFunc], [Add], [AddPlain])
// or a toolset ([New], [NewFunction]). Options that make no sense for the
// thing being built (an id on a tool, a schema on a toolset) are rejected by
// its constructor with an error naming the option.
type Option func(*settings)

// field is one settable field, for "explicitly set" tracking and for
// rejecting misapplied options.
type field uint16

const (
	fDescription field = 1 << iota
	fSchema
	fStrict
	fSequential
	fMetadata
	fTimeout
	fMaxRetries
	fVisibility
	fID
	fInstructions
	fConcurrentSafe
	fErrorHandler
)

var fieldNames = map[field]string{
	fDescription: "WithDescription", fSchema: "WithSchema", fStrict: "WithStrict",
	fSequential: "WithSequential", fMetadata: "WithMetadata", fTimeout: "WithTimeout",
	fMaxRetries: "WithMaxRetries", fVisibility: "WithVisibility", fID: "WithID",
	fInstructions: "WithInstructions", fConcurrentSafe: "WithConcurrentSafe",
	fErrorHandler: "WithErrorHandler",
}

type settings struct {
	set          field
	description  string
	schema       any
	strict       bool
	sequential   bool
	concurrent   bool
	metadata     map[string]any
	timeout      time.Duration
	maxRetries   int
	visibility   Visibility
	id           string
	instructions []string
	handlers     []ErrorHandler
}

func (s *settings) has(f field) bool { return s.set&f != 0 }

// apply runs opts and rejects any option outside allowed.
func (s *settings) apply(opts []Option, allowed field, what string) error {
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	var errs []error
	for f := fDescription; f <= fErrorHandler; f <<= 1 {
		if s.has(f) && allowed&f == 0 {
			errs = append(errs, fmt.Errorf("%w: %s does not apply to %s", ErrInvalidDefinition, fieldNames[f], what))
		}
	}
	if s.has(fTimeout) && s.timeout <= 0 {
		errs = append(errs, fmt.Errorf("%w: WithTimeout(%s) must be positive", ErrInvalidDefinition, s.timeout))
	}
	if s.has(fMaxRetries) && s.maxRetries < 0 {
		errs = append(errs, fmt.Errorf("%w: WithMaxRetries(%d) must not be negative", ErrInvalidDefinition, s.maxRetries))
	}
	return errors.Join(errs...)
}

// WithDescription sets a tool's model-facing description (Go functions
// have no docstrings). Strict tools must have one.
func WithDescription(d string) Option {
	return func(s *settings) { s.description, s.set = d, s.set|fDescription }
}

// WithSchema gives a tool an explicit parameters schema instead of the one
// inferred from its argument type; required for map argument types. The
// schema may be a *jsonschema.Schema, a map[string]any, JSON text
// (json.RawMessage, []byte, string) or any JSON-encodable value. It is
// checked by the constructor (see [SchemaRule]).
func WithSchema(schema any) Option {
	return func(s *settings) { s.schema, s.set = schema, s.set|fSchema }
}

// WithStrict marks a tool (or every tool of a function toolset) strict.
func WithStrict(strict bool) Option {
	return func(s *settings) { s.strict, s.set = strict, s.set|fStrict }
}

// WithSequential makes a tool (or every tool of a function toolset) run in
// model-returned order.
func WithSequential(sequential bool) Option {
	return func(s *settings) { s.sequential, s.set = sequential, s.set|fSequential }
}

// WithConcurrentSafe marks a tool (or every tool of a function toolset)
// safe to run concurrently with itself: it only reads, or it is
// idempotent. Calls of such a tool that appear more than once in one model
// response run in parallel instead of making the batch sequential; see
// [Definition.ConcurrentSafe].
func WithConcurrentSafe(safe bool) Option {
	return func(s *settings) { s.concurrent, s.set = safe, s.set|fConcurrentSafe }
}

// WithMetadata sets model-facing metadata. On a function toolset it is
// merged under each tool's own metadata (the tool's keys win). m is copied.
func WithMetadata(m map[string]any) Option {
	m = maps.Clone(m)
	return func(s *settings) { s.metadata, s.set = m, s.set|fMetadata }
}

// WithTimeout sets the per-attempt timeout of a tool, or the default of a
// toolset's tools. It must be positive.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) { s.timeout, s.set = d, s.set|fTimeout }
}

// WithMaxRetries sets how many internal retries may follow a failed first
// attempt (so n+1 attempts in all), for a tool or as a toolset default.
func WithMaxRetries(n int) Option {
	return func(s *settings) { s.maxRetries, s.set = n, s.set|fMaxRetries }
}

// WithVisibility sets a tool's scope: [Visible], [System] or [Hidden].
func WithVisibility(v Visibility) Option {
	return func(s *settings) { s.visibility, s.set = v, s.set|fVisibility }
}

// WithID sets a toolset's stable id. Without it the name stands in, and
// the identity checks report missing_id ([ToolsetInfo.ImplicitID]).
func WithID(id string) Option {
	return func(s *settings) { s.id, s.set = id, s.set|fID }
}

// WithInstructions adds instructions to a toolset; they are rendered under
// the toolset's name as their group.
func WithInstructions(lines ...string) Option {
	lines = append([]string(nil), lines...)
	return func(s *settings) { s.instructions, s.set = append(s.instructions, lines...), s.set|fInstructions }
}
