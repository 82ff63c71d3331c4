package toolsets

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// AllTools is the selector entry that matches every tool ("*").
const AllTools = "*"

// MetaBundle is the definition metadata key that puts a tool in one or
// more bundles (a string or a list of strings) that a [Selector] entry
// can name: {"bundle": "filesystem"} or {"bundle": ["filesystem", "write"]}.
const MetaBundle = "bundle"

// ErrInvalidSelector reports a selector built with no entries, or with a
// blank entry.
var ErrInvalidSelector = errors.New("toolsets: invalid selector")

// ErrUnmatchedSelector reports a selector entry that matches nothing that
// exists: no tool name, no toolset name or id, no bundle. A typo in a
// safety policy must not disable it, so this is always an error; a
// [*SelectorError] carries the details.
var ErrUnmatchedSelector = errors.New("toolsets: selector entry matches nothing")

// Selector chooses tools by a list of entries, the one matcher of every
// approval and deferral policy: [RequireApproval], [Defer] and an agent's
// approval policy. An entry selects a tool when it equals
//
//   - [AllTools] ("*"),
//   - the tool's name, as the model sees it (after prefixes and renames),
//   - the name or the id of a toolset the tool belongs to ([Target]), or
//   - one of the tool's bundles ([Bundles], from metadata "bundle").
//
// Matching is exact and case-sensitive. [Selector.Check] refuses entries
// that match nothing. A Selector is immutable and safe for concurrent use.
type Selector struct {
	entries []string
	set     map[string]bool
}

// NewSelector returns the selector of entries. It fails with
// [ErrInvalidSelector] when entries is empty or holds a blank entry.
func NewSelector(entries []string) (*Selector, error) {
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: no entries (use %q for all tools)", ErrInvalidSelector, AllTools)
	}
	s := &Selector{set: make(map[string]bool, len(entries))}
	for _, e := range entries {
		if strings.TrimSpace(e) == "" {
			return nil, fmt.Errorf("%w: blank entry in %q", ErrInvalidSelector, entries)
		}
		if !s.set[e] {
			s.entries = append(s.entries, e)
			s.set[e] = true
		}
	}
	return s, nil
}

// Entries returns the selector's entries, in order, without repeats.
func (s *Selector) Entries() []string { return slices.Clone(s.entries) }

// Target is one tool as a selector sees it: its definition as exposed, and
// the identities of the toolsets that hold it, outermost first (see
// [Identities]); none for a loose tool.
type Target struct {
	Definition Definition
	Toolsets   []ToolsetInfo
}

// Match returns the first entry of s that selects t (in the order "*",
// tool name, toolset names and ids, bundles), and whether there is one.
func (s *Selector) Match(t Target) (string, bool) {
	if s.set[AllTools] {
		return AllTools, true
	}
	if s.set[t.Definition.Name] {
		return t.Definition.Name, true
	}
	for _, ts := range t.Toolsets {
		for _, k := range []string{ts.Name, ts.ID} {
			if k != "" && s.set[k] {
				return k, true
			}
		}
	}
	for _, b := range Bundles(t.Definition) {
		if s.set[b] {
			return b, true
		}
	}
	return "", false
}

// Bundles returns the bundles of d: its metadata "bundle" ([MetaBundle]),
// a string or a list of strings. Other values name no bundle.
func Bundles(d Definition) []string {
	switch b := d.Metadata[MetaBundle].(type) {
	case string:
		return []string{b}
	case []string:
		return slices.Clone(b)
	case []any:
		var out []string
		for _, v := range b {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Unmatched returns the entries of s that select none of targets and
// name none of toolsets (a toolset with no tools at the moment still
// exists), in order. [AllTools] is never unmatched.
func (s *Selector) Unmatched(targets []Target, toolsets []ToolsetInfo) []string {
	known := knownNames(targets, toolsets)
	var out []string
	for _, e := range s.entries {
		if e != AllTools && !known.has(e) {
			out = append(out, e)
		}
	}
	return out
}

// Check returns nil when every entry of s matches something in targets
// or toolsets, else a [*SelectorError] that names the unmatched entries
// and lists what exists. policy ("approval_required", "deferred",
// "approval_policy") is kept in the error's Policy field for programs;
// the message leaves it to the caller's context.
func (s *Selector) Check(policy string, targets []Target, toolsets []ToolsetInfo) error {
	bad := s.Unmatched(targets, toolsets)
	if len(bad) == 0 {
		return nil
	}
	k := knownNames(targets, toolsets)
	return &SelectorError{Policy: policy, Entries: bad, Tools: k.sorted(k.tools), Toolsets: k.sorted(k.toolsets), Bundles: k.sorted(k.bundles)}
}

type known struct{ tools, toolsets, bundles map[string]bool }

func knownNames(targets []Target, toolsets []ToolsetInfo) known {
	k := known{tools: map[string]bool{}, toolsets: map[string]bool{}, bundles: map[string]bool{}}
	addSets := func(infos []ToolsetInfo) {
		for _, ts := range infos {
			for _, n := range []string{ts.Name, ts.ID} {
				if n != "" {
					k.toolsets[n] = true
				}
			}
		}
	}
	for _, t := range targets {
		k.tools[t.Definition.Name] = true
		for _, b := range Bundles(t.Definition) {
			k.bundles[b] = true
		}
		addSets(t.Toolsets)
	}
	addSets(toolsets)
	return k
}

func (k known) has(e string) bool { return k.tools[e] || k.toolsets[e] || k.bundles[e] }

func (known) sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// SelectorError reports selector entries that match nothing, and what
// exists: the tool names, toolset names and ids, and bundles they were
// matched against. It matches [ErrUnmatchedSelector].
type SelectorError struct {
	// Policy names the policy the entries belong to ("approval_required",
	// "deferred", "approval_policy"); the message does not repeat it.
	Policy string
	// Entries are the entries that match nothing.
	Entries []string
	// Tools, Toolsets and Bundles are what exists, sorted.
	Tools, Toolsets, Bundles []string
}

// listLimit bounds each list of what exists in a SelectorError's message.
const listLimit = 20

func (e *SelectorError) Error() string {
	list := func(names []string) string {
		if len(names) == 0 {
			return "none"
		}
		if len(names) > listLimit {
			return strings.Join(names[:listLimit], ", ") + fmt.Sprintf(", … (%d more)", len(names)-listLimit)
		}
		return strings.Join(names, ", ")
	}
	quoted := make([]string, len(e.Entries))
	for i, n := range e.Entries {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	noun := "entry %s matches"
	if len(e.Entries) > 1 {
		noun = "entries %s match"
	}
	return fmt.Sprintf(noun+" no tool name, toolset name or id, or bundle (tools: %s; toolsets: %s; bundles: %s)",
		strings.Join(quoted, ", "), list(e.Tools), list(e.Toolsets), list(e.Bundles))
}

// Unwrap returns [ErrUnmatchedSelector].
func (e *SelectorError) Unwrap() error { return ErrUnmatchedSelector }
