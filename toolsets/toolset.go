package toolsets

import (
	"context"
	"fmt"
	"time"
)

// Toolset groups tools and instructions so they move as one unit.
//
// Prepare is the one required method, so that context-dependent toolsets
// fit the same contract: a static toolset returns the same inventory every
// time, a dynamic one computes it from the [ToolsetContext]. Lifecycle
// hooks (enter, refresh, exit) and wrappers (prefixed, filtered, renamed, …)
// are added as optional interfaces and decorators over Toolset, so this
// interface does not change when they arrive.
type Toolset interface {
	// Info returns the toolset's identity and the defaults it gives its
	// tools. It does not block.
	Info() ToolsetInfo
	// Prepare returns the toolset's tools and instructions for tc. It may
	// block (a dynamic toolset may do I/O) and must honour ctx.
	Prepare(ctx context.Context, tc *ToolsetContext) (Preparation, error)
}

// ToolsetInfo is a toolset's identity and tool defaults.
type ToolsetInfo struct {
	// Name is the toolset's name (a valid [ValidateName] name); it is also
	// the group of its instructions.
	Name string
	// ID is the stable id durable products store. The constructors of
	// this package default it to Name when no [WithID] is given, and then
	// set ImplicitID: the name stands in for running, but the identity
	// checks ([ValidateIDs]) report the toolset as missing_id.
	ID string
	// ImplicitID reports that ID was not declared but defaulted to Name.
	// A toolset of another package that fills ID itself leaves it false.
	ImplicitID bool
	// Timeout is the per-attempt timeout for tools that set none; 0 inherits
	// the registry default.
	Timeout time.Duration
	// MaxRetries is the retry budget for tools that set none; nil inherits
	// the registry default.
	MaxRetries *int
}

// ToolsetContext is the read-only view of the run a toolset is prepared
// for, built by the runtime at preparation time. The zero value means
// "no run": static registration. Toolsets must not change it (nor the
// maps and values it refers to); the runtime may share one value between
// the toolsets of a step.
type ToolsetContext struct {
	// AgentID identifies the agent (profile) the run belongs to.
	AgentID        string
	RunID          string
	SessionID      string
	ConversationID string
	// RunStep counts model requests in the run, from 0.
	RunStep int
	// Metadata is run metadata; read-only.
	Metadata map[string]any
	// WorkspaceRoot is the run's workspace directory, empty when the agent
	// has none.
	WorkspaceRoot string
	// Environment is the run's environment provider (filesystem, shell),
	// nil when the agent has none. It is opaque to this package; the
	// environment toolsets give it a type.
	Environment any
	// Resources are the named resources the application attached to the
	// run; nil means none.
	Resources Resources
}

// Resources is a read-only registry of named values an application
// attaches to a run (clients, handles, configuration) for its toolsets.
type Resources interface {
	// Resource returns the value registered as name. It does not block.
	Resource(name string) (any, bool)
}

// ResourceMap is the simplest [Resources]: a map, read-only once built.
type ResourceMap map[string]any

// Resource returns m[name].
func (m ResourceMap) Resource(name string) (any, bool) {
	v, ok := m[name]
	return v, ok
}

// Preparation is what a toolset offers for one preparation.
//
// A dynamic toolset may hand over other toolsets instead of (or besides)
// tools: [Resolve] prepares each of them for the same context and
// flattens everything into Tools and Instructions. Toolsets is how
// "prepare returns another toolset" is expressed in Go.
type Preparation struct {
	Tools        []Tool
	Instructions []Instruction
	// Toolsets are nested toolsets to prepare for the same context; see
	// [Resolve]. Their tools keep their own toolset's timeout and retry
	// defaults.
	Toolsets []Toolset
}

// Instruction is one instruction line and the group it renders under
// (the toolset's name, for the toolsets in this package).
type Instruction struct {
	Group string `json:"group"`
	Text  string `json:"text"`
}

// Static is a fixed group of tools and instructions. Build it with [New].
type Static struct {
	info         ToolsetInfo
	tools        []Tool
	instructions []Instruction
}

var _ Toolset = (*Static)(nil)

// staticFields are the options [New] accepts.
const staticFields = fID | fInstructions | fTimeout | fMaxRetries

// New builds a static toolset named name holding tools. It accepts
// [WithID], [WithInstructions], [WithTimeout] and [WithMaxRetries] (the
// last two are defaults for tools that set none). Tool names must be
// unique within the toolset; each tool's definition is checked as the
// registry would.
func New(name string, tools []Tool, opts ...Option) (*Static, error) {
	var s settings
	if err := ValidateName(name); err != nil {
		return nil, fmt.Errorf("toolset: %w", err)
	}
	if err := s.apply(opts, staticFields, "a static toolset"); err != nil {
		return nil, fmt.Errorf("toolset %q: %w", name, err)
	}
	ts := &Static{info: infoFrom(name, &s), tools: append([]Tool(nil), tools...), instructions: instructionsFrom(name, s.instructions)}
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("toolset %q: %w: nil tool", name, ErrInvalidDefinition)
		}
		if _, err := compileEntry(t, name); err != nil {
			return nil, err
		}
		n := t.Definition().Name
		if seen[n] {
			return nil, &DefinitionError{Toolset: name, Tool: n, Err: ErrDuplicateTool}
		}
		seen[n] = true
	}
	return ts, nil
}

// Info returns the toolset's identity and defaults.
func (s *Static) Info() ToolsetInfo { return s.info.clone() }

// Prepare returns the fixed tools and instructions; it ignores ctx and tc.
func (s *Static) Prepare(context.Context, *ToolsetContext) (Preparation, error) {
	return Preparation{Tools: append([]Tool(nil), s.tools...), Instructions: append([]Instruction(nil), s.instructions...)}, nil
}

func infoFrom(name string, s *settings) ToolsetInfo {
	info := ToolsetInfo{Name: name, ID: name, ImplicitID: true, Timeout: s.timeout}
	if s.has(fID) {
		info.ID, info.ImplicitID = s.id, false
	}
	if s.has(fMaxRetries) {
		n := s.maxRetries
		info.MaxRetries = &n
	}
	return info
}

func (i ToolsetInfo) clone() ToolsetInfo {
	if i.MaxRetries != nil {
		n := *i.MaxRetries
		i.MaxRetries = &n
	}
	return i
}

func instructionsFrom(group string, lines []string) []Instruction {
	out := make([]Instruction, 0, len(lines))
	for _, l := range lines {
		out = append(out, Instruction{Group: group, Text: l})
	}
	return out
}
