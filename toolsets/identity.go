package toolsets

import (
	"errors"
	"fmt"
	"strings"
)

// ErrToolsetID reports toolset identities that durable storage cannot rely
// on: a missing, blank or duplicate id. [IDReport.Err] matches it.
var ErrToolsetID = errors.New("toolsets: invalid toolset identity")

// IDProblem names what an [IDIssue] is about. The set is closed.
type IDProblem string

// The identity problems.
const (
	// ProblemMissingID: the toolset declares no id: ID is empty, or
	// defaulted to the name ([ToolsetInfo.ImplicitID]). An error in strict
	// mode, else a warning: the name stands in for it while running.
	ProblemMissingID IDProblem = "missing_id"
	// ProblemEmptyID: the id is only white space. Always an error.
	ProblemEmptyID IDProblem = "empty_id"
	// ProblemDuplicateID: two toolsets share an id. Always an error.
	ProblemDuplicateID IDProblem = "duplicate_id"
	// ProblemDuplicateName: two toolsets share a name. A warning.
	ProblemDuplicateName IDProblem = "duplicate_name"
)

// IDIssue is one identity problem of one toolset (by its position in the
// checked list).
type IDIssue struct {
	Index   int       `json:"index"`
	Name    string    `json:"name"`
	ID      string    `json:"id"`
	Problem IDProblem `json:"problem"`
}

func (i IDIssue) String() string {
	return fmt.Sprintf("toolset #%d %q (id %q): %s", i.Index, i.Name, i.ID, i.Problem)
}

// IDReport is the result of an identity check: errors make the toolsets
// unfit for durable products; warnings do not.
type IDReport struct {
	Errors   []IDIssue `json:"errors,omitempty"`
	Warnings []IDIssue `json:"warnings,omitempty"`
}

// Err returns nil when there are no errors, else an error matching
// [ErrToolsetID] that lists them.
func (r *IDReport) Err() error {
	if r == nil || len(r.Errors) == 0 {
		return nil
	}
	parts := make([]string, len(r.Errors))
	for i, e := range r.Errors {
		parts[i] = e.String()
	}
	return fmt.Errorf("%w: %s", ErrToolsetID, strings.Join(parts, "; "))
}

// ValidateIDs checks the identities of toolsets: blank and duplicate ids
// are errors, duplicate names warnings, and a missing id (none, or the
// name standing in for it, [ToolsetInfo.ImplicitID]) is an error when
// strict, a warning otherwise. Ids are compared as used, the name
// fallback included, so two toolsets without ids and with the same name
// are a duplicate id as well. A wrapper that changes what the model sees
// has an identity of its own, derived from the wrapped one (see
// [Wrapped]): one toolset attached under two prefixes is not a duplicate. It only calls Info: dynamic toolsets and
// factories are not prepared (not materialised). A nil toolset is
// reported as a missing id.
func ValidateIDs(strict bool, toolsets ...Toolset) *IDReport {
	r := &IDReport{}
	ids, names := map[string]bool{}, map[string]bool{}
	for i, ts := range toolsets {
		var info ToolsetInfo
		if ts != nil {
			info = ts.Info()
		}
		issue := IDIssue{Index: i, Name: info.Name, ID: info.ID}
		add := func(p IDProblem, isErr bool) {
			issue.Problem = p
			if isErr {
				r.Errors = append(r.Errors, issue)
			} else {
				r.Warnings = append(r.Warnings, issue)
			}
		}
		switch {
		case info.ID == "":
			add(ProblemMissingID, strict)
		case strings.TrimSpace(info.ID) == "":
			add(ProblemEmptyID, true)
		default:
			if info.ImplicitID {
				add(ProblemMissingID, strict)
			}
			if ids[info.ID] {
				add(ProblemDuplicateID, true)
			}
		}
		ids[info.ID] = true
		if info.Name != "" && names[info.Name] {
			add(ProblemDuplicateName, false)
		}
		names[info.Name] = true
	}
	return r
}

// ValidateForDurability is [ValidateIDs] in strict mode: what to call
// before storing or restoring a durable agent profile or session archive.
func ValidateForDurability(toolsets ...Toolset) *IDReport {
	return ValidateIDs(true, toolsets...)
}
