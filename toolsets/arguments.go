package toolsets

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrUnknownTool: [Registry.CheckArguments] was asked about a tool the
// registry does not hold.
var ErrUnknownTool = errors.New("toolsets: unknown tool")

// CheckArguments checks args against the parameters schema of the tool
// registered as name, exactly as [Registry.Call] does before the tool runs
// (empty args are the empty object), without running it. It returns nil
// when they fit, an [*InvalidArgumentsError] saying what is wrong when they
// do not, and an error matching [ErrUnknownTool] when no such tool is
// registered. A runtime uses it to refuse an approval whose reviewed
// arguments the tool would reject.
func (r *Registry) CheckArguments(name string, args json.RawMessage) error {
	r.mu.RLock()
	e := r.entries[name]
	r.mu.RUnlock()
	if e == nil {
		return fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	if _, ia := e.check(args); ia != nil {
		return ia
	}
	return nil
}
