package toolsets

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Visibility is who may see a tool. The set is closed: [Visible], [System]
// and [Hidden]; the zero value is [Visible].
type Visibility uint8

const (
	// Visible tools are application capabilities shown to the model.
	Visible Visibility = iota
	// System tools are framework or infrastructure capabilities; they are
	// shown to the model like visible tools but marked as system scope.
	System
	// Hidden tools stay callable by application code but are left out of
	// model-facing definitions and prompt descriptions, and a model call to
	// one gets a [KindNotExposed] return.
	Hidden
)

var visibilityNames = [...]string{Visible: "visible", System: "system", Hidden: "hidden"}

// Valid reports whether v is one of the three visibilities.
func (v Visibility) Valid() bool { return int(v) < len(visibilityNames) }

// String returns "visible", "system" or "hidden".
func (v Visibility) String() string {
	if !v.Valid() {
		return fmt.Sprintf("Visibility(%d)", uint8(v))
	}
	return visibilityNames[v]
}

// MarshalText encodes v by name.
func (v Visibility) MarshalText() ([]byte, error) {
	if !v.Valid() {
		return nil, fmt.Errorf("toolsets: invalid visibility %d", uint8(v))
	}
	return []byte(visibilityNames[v]), nil
}

// UnmarshalText decodes a visibility name, rejecting unknown names.
func (v *Visibility) UnmarshalText(b []byte) error {
	for i, n := range visibilityNames {
		if n == string(b) {
			*v = Visibility(i)
			return nil
		}
	}
	return fmt.Errorf("toolsets: unknown visibility %q", b)
}

// Definition describes a tool: what the model sees (name, description,
// parameters, strict, metadata) and the runtime policy the registry applies
// (sequential, concurrent-safe, timeout, retry budget, visibility).
//
// Zero Timeout and nil MaxRetries mean "not set here": the registry falls
// back to the toolset's value, then its own default (see [Registry]).
type Definition struct {
	// Name is the model-facing name; see [ValidateName].
	Name string `json:"name"`
	// Description tells the model what the tool does; required when Strict.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the argument object.
	Parameters json.RawMessage `json:"parameters"`
	// Strict asks the provider for a strict tool definition.
	Strict bool `json:"strict,omitempty"`
	// Sequential makes the tool run in model-returned order rather than in
	// parallel with other calls.
	Sequential bool `json:"sequential,omitempty"`
	// ConcurrentSafe says the tool may run concurrently with itself: it
	// only reads, or it is idempotent (an MCP tool's readOnlyHint, the
	// read tools of environment toolsets). The seed makes a batch in which
	// one tool name appears more than once run sequentially, to keep
	// repeated writes in order; repeated calls of a ConcurrentSafe tool
	// run in parallel instead. A batch keeps the seed's order when any
	// called tool is Sequential (Sequential wins over ConcurrentSafe) or
	// any repeated tool is not ConcurrentSafe.
	ConcurrentSafe bool `json:"concurrent_safe,omitempty"`
	// Metadata is model-facing metadata ({"risk": "network"}).
	Metadata map[string]any `json:"metadata,omitempty"`
	// Timeout bounds each attempt; 0 inherits.
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxRetries is the number of internal re-runs allowed after the first
	// attempt fails with a retryable kind; nil inherits. See [Registry].
	MaxRetries *int `json:"max_retries,omitempty"`
	// Visibility is the tool's scope; the zero value is [Visible].
	Visibility Visibility `json:"visibility"`

	// Extras holds what the tool carries that is not data: its hooks and
	// argument validators ([HookTool], [HookToolset], [ValidateArguments]).
	// They follow the definition through wrappers and never cross a
	// process boundary (a remote tool's run on its worker). Nil for none;
	// never changed once set (each wrapper sets a new one).
	Extras *Extras `json:"-"`
}

// Extras are the hooks and argument validators of a [Definition].
type Extras struct {
	toolHooks    []Hook
	toolsetHooks []Hook
	validators   []ArgumentValidator
}

// extras returns a copy of d's extras to change.
func (d Definition) extras() *Extras {
	if d.Extras == nil {
		return &Extras{}
	}
	x := *d.Extras
	x.toolHooks = slices.Clip(x.toolHooks)
	x.toolsetHooks = slices.Clip(x.toolsetHooks)
	x.validators = slices.Clip(x.validators)
	return &x
}

// Clone returns a copy of d that shares no maps or slices with it.
func (d Definition) Clone() Definition {
	d.Parameters = append(json.RawMessage(nil), d.Parameters...)
	d.Metadata = maps.Clone(d.Metadata)
	if d.MaxRetries != nil {
		n := *d.MaxRetries
		d.MaxRetries = &n
	}
	return d
}

// check validates everything but the schema (which is checked when it is
// compiled).
func (d *Definition) check() error {
	if err := ValidateName(d.Name); err != nil {
		return err
	}
	if !d.Visibility.Valid() {
		return fmt.Errorf("%w: visibility %d", ErrInvalidDefinition, uint8(d.Visibility))
	}
	if d.Strict && d.Description == "" {
		return ErrMissingDescription
	}
	if d.Timeout < 0 {
		return fmt.Errorf("%w: negative timeout %s", ErrInvalidDefinition, d.Timeout)
	}
	if d.MaxRetries != nil && *d.MaxRetries < 0 {
		return fmt.Errorf("%w: negative max retries %d", ErrInvalidDefinition, *d.MaxRetries)
	}
	if d.Metadata != nil {
		if _, err := json.Marshal(d.Metadata); err != nil {
			return fmt.Errorf("%w: metadata is not JSON: %v", ErrInvalidDefinition, err)
		}
	}
	return nil
}
