package toolsets

import (
	"errors"
	"fmt"
	"strings"
)

// A tool selection narrows the tools of one run, in order, from nothing:
//
//	ALL          every tool that is not hidden
//	SYSTEM       the system tools
//	APPLICATION  the visible (application) tools
//	+name        add the tool name
//	-name        remove the tool name
//
// ("ALL", "-send_email") is everything but send_email; ("SYSTEM",
// "+find_empty_slot") the system tools and find_empty_slot. A hidden tool
// can never be selected. Entries are checked twice: their grammar when
// the selection is made ([ParseSelection]), their names against the
// step's tools ([Selection.Apply]).

// ErrSelection is matched by every [SelectionError].
var ErrSelection = errors.New("toolsets: invalid tool selection")

// SelectionError is a tool-selection entry that is malformed, names no
// tool, or names a hidden tool (Problem: "malformed", "unknown",
// "hidden").
type SelectionError struct {
	Entry   string
	Problem string
	Detail  string
}

func (e *SelectionError) Error() string {
	return fmt.Sprintf("tool selection entry %q is %s: %s", e.Entry, e.Problem, e.Detail)
}

func (e *SelectionError) Is(target error) bool { return target == ErrSelection }

// The selection categories.
const (
	SelectAll         = "ALL"
	SelectSystem      = "SYSTEM"
	SelectApplication = "APPLICATION"
)

// Selection is a parsed tool selection.
type Selection struct{ entries []string }

// ParseSelection checks the grammar of entries.
func ParseSelection(entries ...string) (Selection, error) {
	if len(entries) == 0 {
		return Selection{}, &SelectionError{Entry: "", Problem: "malformed", Detail: "a selection needs at least one entry"}
	}
	for _, e := range entries {
		switch {
		case e == SelectAll || e == SelectSystem || e == SelectApplication:
		case len(e) > 1 && (e[0] == '+' || e[0] == '-'):
			if err := ValidateName(e[1:]); err != nil {
				return Selection{}, &SelectionError{Entry: e, Problem: "malformed", Detail: "not a tool name: " + err.Error()}
			}
		default:
			return Selection{}, &SelectionError{Entry: e, Problem: "malformed",
				Detail: "want ALL, SYSTEM, APPLICATION, +name or -name" + caseHint(e)}
		}
	}
	return Selection{entries: append([]string(nil), entries...)}, nil
}

func caseHint(e string) string {
	for _, c := range []string{SelectAll, SelectSystem, SelectApplication} {
		if strings.EqualFold(e, c) {
			return fmt.Sprintf(" (categories are upper case: %s)", c)
		}
	}
	return ""
}

// Apply returns the names of defs the selection keeps. An entry naming a
// tool defs lacks, or a hidden one, is an error.
func (s Selection) Apply(defs []Definition) (map[string]bool, error) {
	byName := make(map[string]Definition, len(defs))
	for _, d := range defs {
		byName[d.Name] = d
	}
	keep := map[string]bool{}
	for _, e := range s.entries {
		switch e {
		case SelectAll, SelectSystem, SelectApplication:
			for _, d := range defs {
				if d.Visibility == Hidden {
					continue
				}
				if e == SelectAll || (e == SelectSystem) == (d.Visibility == System) {
					keep[d.Name] = true
				}
			}
			continue
		}
		name := e[1:]
		d, ok := byName[name]
		switch {
		case !ok:
			return nil, &SelectionError{Entry: e, Problem: "unknown", Detail: fmt.Sprintf("the run has no tool %q", name)}
		case d.Visibility == Hidden:
			return nil, &SelectionError{Entry: e, Problem: "hidden", Detail: fmt.Sprintf("tool %q is hidden and cannot be selected", name)}
		}
		keep[name] = e[0] == '+'
	}
	for k, v := range keep {
		if !v {
			delete(keep, k)
		}
	}
	return keep, nil
}
