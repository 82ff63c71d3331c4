package toolsets

import "fmt"

// MaxNameLen is the longest valid tool or toolset name.
const MaxNameLen = 64

// NameError reports a name that breaks the rule: 1 to [MaxNameLen]
// characters, each an ASCII letter, digit, '_' or '-'. It matches
// [ErrInvalidName] with errors.Is.
type NameError struct {
	Name   string
	Reason string
}

func (e *NameError) Error() string {
	return fmt.Sprintf("invalid name %q: %s (use 1-%d letters, digits, '_' or '-')", e.Name, e.Reason, MaxNameLen)
}

// Is reports whether target is [ErrInvalidName].
func (e *NameError) Is(target error) bool { return target == ErrInvalidName }

// ValidateName checks a model-facing tool or toolset name and returns a
// [*NameError] when it is invalid.
func ValidateName(name string) error {
	switch {
	case name == "":
		return &NameError{Name: name, Reason: "empty"}
	case len(name) > MaxNameLen:
		return &NameError{Name: name, Reason: fmt.Sprintf("%d characters long", len(name))}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			continue
		}
		return &NameError{Name: name, Reason: fmt.Sprintf("character %q at byte %d is not allowed", rune(c), i)}
	}
	return nil
}
