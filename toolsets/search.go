package toolsets

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Session state keys under which tool search and the tool proxy keep what
// a session has loaded (see [SearchState]).
const (
	StateLoadedTools      = "tool_search_loaded_tools"
	StateLoadedNamespaces = "tool_search_loaded_namespaces"
)

// SearchState is what a session has loaded through tool search or the
// tool proxy: tool names and the ids of their toolsets (namespaces), in
// load order. It is session state: a runtime exports it with the session
// (its JSON keys are [StateLoadedTools] and [StateLoadedNamespaces]) and
// gives it back with Restore.
type SearchState struct {
	LoadedTools      []string `json:"tool_search_loaded_tools"`
	LoadedNamespaces []string `json:"tool_search_loaded_namespaces"`
}

// Export returns the state as session-state entries.
func (s SearchState) Export() map[string]any {
	return map[string]any{
		StateLoadedTools:      slices.Clone(s.LoadedTools),
		StateLoadedNamespaces: slices.Clone(s.LoadedNamespaces),
	}
}

// SearchStateFrom reads the state back from session-state entries (as
// produced by Export, or decoded from JSON: []string or []any of
// strings). Missing keys mean nothing loaded.
func SearchStateFrom(m map[string]any) (SearchState, error) {
	var s SearchState
	for key, dst := range map[string]*[]string{StateLoadedTools: &s.LoadedTools, StateLoadedNamespaces: &s.LoadedNamespaces} {
		switch v := m[key].(type) {
		case nil:
		case []string:
			*dst = slices.Clone(v)
		case []any:
			for _, x := range v {
				str, ok := x.(string)
				if !ok {
					return SearchState{}, fmt.Errorf("session state %q: %w: element %T is not a string", key, ErrInvalidDefinition, x)
				}
				*dst = append(*dst, str)
			}
		default:
			return SearchState{}, fmt.Errorf("session state %q: %w: %T is not a list of strings", key, ErrInvalidDefinition, v)
		}
	}
	return s, nil
}

// SearchOutcome is the kind of a [SearchRecord]. The set is closed; the
// values are the suffixes of the runtime's tool_search.* event types.
type SearchOutcome string

// The search outcomes.
const (
	SearchInitialized SearchOutcome = "initialized"
	SearchLoaded      SearchOutcome = "loaded"
	SearchNoMatch     SearchOutcome = "no_match"
	SearchFailed      SearchOutcome = "failed"
)

// SearchRecord is the typed record of a tool-search step, what a runtime
// turns into a tool_search.{Outcome} event.
type SearchRecord struct {
	Outcome SearchOutcome `json:"outcome"`
	// Toolset is the search (or proxy) toolset's name.
	Toolset   string `json:"toolset"`
	SessionID string `json:"session_id,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	Query     string `json:"query,omitempty"`
	// Tools are the tools loaded (loaded) or searchable (initialized).
	Tools []string `json:"tools,omitempty"`
	// Namespaces are the toolset ids of Tools (loaded).
	Namespaces []string `json:"namespaces,omitempty"`
	// Error says why a search failed.
	Error string `json:"error,omitempty"`
}

// SearchOption configures [NewSearch] and [NewProxy].
type SearchOption func(*searchCore)

// OnSearch sets the function that receives every [SearchRecord]. It is
// called synchronously (from Prepare for initialized, from the search
// tool's call otherwise) and must not block for long. The records are
// also emitted as tool progress ([ToolContext.Emit]) named
// "tool_search.{outcome}", so a runtime that logs progress sees them
// without an observer.
func OnSearch(fn func(SearchRecord)) SearchOption {
	return func(c *searchCore) { c.observe = fn }
}

// SearchName sets the search toolset's name (default "tool_search"; for
// the proxy, "tool_proxy" or the prefix).
func SearchName(name string) SearchOption {
	return func(c *searchCore) { c.name = name }
}

// SearchID sets the search (or proxy) toolset's durable id. Without it
// the name stands in, and the identity checks report missing_id.
func SearchID(id string) SearchOption {
	return func(c *searchCore) { c.id = id }
}

// searchCore is what search and proxy share: the library, the matching,
// and the per-session loaded state.
type searchCore struct {
	lib        *Library
	maxResults int
	name       string
	id         string
	observe    func(SearchRecord)
	// tools are the library's tools the toolset reaches, in library
	// order: all of them but those whose names are reserved (the
	// toolset's own tool names).
	tools  []*libTool
	byName map[string]*libTool

	mu       sync.Mutex
	sessions map[string]*loaded
}

type loaded struct {
	tools, namespaces []string
	tset, nset        map[string]bool
	initialized       bool
}

// newSearchCore returns the core over lib; library tools named in reserved
// are left out: never matched, loaded, restored or called.
func newSearchCore(lib *Library, maxResults int, name string, reserved []string, opts []SearchOption) (*searchCore, error) {
	if lib == nil {
		return nil, fmt.Errorf("%s: %w: nil library", name, ErrInvalidDefinition)
	}
	if maxResults <= 0 {
		return nil, fmt.Errorf("%s: %w: max results %d must be positive", name, ErrInvalidDefinition, maxResults)
	}
	c := &searchCore{lib: lib, maxResults: maxResults, name: name, sessions: map[string]*loaded{}, byName: map[string]*libTool{}}
	for _, t := range lib.tools {
		if !slices.Contains(reserved, t.def.Name) {
			c.tools = append(c.tools, t)
			c.byName[t.def.Name] = t
		}
	}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	if err := ValidateName(c.name); err != nil {
		return nil, fmt.Errorf("search toolset: %w", err)
	}
	return c, nil
}

func (c *searchCore) session(id string) *loaded {
	s := c.sessions[id]
	if s == nil {
		s = &loaded{tset: map[string]bool{}, nset: map[string]bool{}}
		c.sessions[id] = s
	}
	return s
}

func (c *searchCore) emit(tc *ToolContext, r SearchRecord) {
	if c.observe != nil {
		c.observe(r)
	}
	if tc != nil {
		_ = tc.Emit("tool_search."+string(r.Outcome), r) // a record always encodes
	}
}

// initialize emits the initialized record the first time a session is
// prepared.
func (c *searchCore) initialize(tc *ToolsetContext) {
	c.mu.Lock()
	s := c.session(tc.SessionID)
	first := !s.initialized
	s.initialized = true
	c.mu.Unlock()
	if first {
		names := make([]string, len(c.tools))
		for i, t := range c.tools {
			names[i] = t.def.Name
		}
		c.emit(nil, SearchRecord{Outcome: SearchInitialized, Toolset: c.name, SessionID: tc.SessionID, RunID: tc.RunID, Tools: names})
	}
}

// match returns up to maxResults library tools for query, best first:
// each query word scores against the tool's name (whole name, a part of
// it split on '_' and '-', a substring), its toolset's name and id, and
// its description; ties keep library order.
func (c *searchCore) match(query string) []*libTool {
	terms := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	slices.Sort(terms)
	terms = slices.Compact(terms)
	type hit struct {
		t     *libTool
		score int
		order int
	}
	var hits []hit
	for i, t := range c.tools {
		score := 0
		for _, q := range terms {
			// Words of one or two letters only count as whole name
			// parts; substrings need three.
			sub := len(q) >= 3
			switch {
			case t.name == q:
				score += 8
			case slices.Contains(t.terms, q):
				score += 4
			case sub && strings.Contains(t.name, q):
				score += 2
			}
			if sub && strings.Contains(t.toolset, q) {
				score += 2
			}
			if sub && strings.Contains(t.desc, q) {
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{t, score, i})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Or(b.score-a.score, a.order-b.order) })
	out := make([]*libTool, 0, min(len(hits), c.maxResults))
	for _, h := range hits[:min(len(hits), c.maxResults)] {
		out = append(out, h.t)
	}
	return out
}

// load records tools as loaded for a session and returns the record.
func (c *searchCore) load(tc *ToolContext, query string, tools []*libTool) SearchRecord {
	r := SearchRecord{Outcome: SearchLoaded, Toolset: c.name, SessionID: tc.SessionID, RunID: tc.RunID, Query: query}
	c.mu.Lock()
	s := c.session(tc.SessionID)
	for _, t := range tools {
		r.Tools = append(r.Tools, t.def.Name)
		if !slices.Contains(r.Namespaces, t.info.ID) {
			r.Namespaces = append(r.Namespaces, t.info.ID)
		}
		if !s.tset[t.def.Name] {
			s.tset[t.def.Name] = true
			s.tools = append(s.tools, t.def.Name)
		}
		if !s.nset[t.info.ID] {
			s.nset[t.info.ID] = true
			s.namespaces = append(s.namespaces, t.info.ID)
		}
	}
	c.mu.Unlock()
	return r
}

// namespaces returns the toolset ids of the tools the core reaches, in
// library order.
func (c *searchCore) namespaces() []string {
	var out []string
	for _, t := range c.tools {
		if !slices.Contains(out, t.info.ID) {
			out = append(out, t.info.ID)
		}
	}
	return out
}

// Library returns the library the toolset searches.
func (c *searchCore) Library() *Library { return c.lib }

// State returns what sessionID has loaded.
func (c *searchCore) State(sessionID string) SearchState {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[sessionID]
	if s == nil {
		return SearchState{}
	}
	return SearchState{LoadedTools: slices.Clone(s.tools), LoadedNamespaces: slices.Clone(s.namespaces)}
}

// Restore replaces what sessionID has loaded with st (a restored session).
// Every tool must be in the library: an unknown one is an error naming it,
// and nothing changes.
func (c *searchCore) Restore(sessionID string, st SearchState) error {
	s := &loaded{tset: map[string]bool{}, nset: map[string]bool{}}
	for _, name := range st.LoadedTools {
		t := c.byName[name]
		if t == nil {
			return fmt.Errorf("restore %s state: %w: tool %q is not in the library", c.name, ErrInvalidDefinition, name)
		}
		if !s.tset[name] {
			s.tset[name] = true
			s.tools = append(s.tools, name)
		}
		if !s.nset[t.info.ID] {
			s.nset[t.info.ID] = true
			s.namespaces = append(s.namespaces, t.info.ID)
		}
	}
	for _, ns := range st.LoadedNamespaces {
		if !s.nset[ns] {
			s.nset[ns] = true
			s.namespaces = append(s.namespaces, ns)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.sessions[sessionID]; old != nil {
		s.initialized = old.initialized
	}
	c.sessions[sessionID] = s
	return nil
}

// Forget drops sessionID's state (a session that ended).
func (c *searchCore) Forget(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, sessionID)
}

// SearchToolName is the name of the tool-search toolset's one tool.
const SearchToolName = "search_tools"

// SearchToolset lets the model search a [Library] instead of receiving
// every tool (the seed's ToolSearchToolset). It exposes one tool,
// [SearchToolName]; the tools a search matches are loaded for the
// session and appear in its next preparation (the model's next turn).
// Build it with [NewSearch]. State, Restore and Forget manage the
// session state ([SearchState]); it is safe for concurrent use.
type SearchToolset struct {
	*searchCore
	tool Tool
}

var _ Toolset = (*SearchToolset)(nil)

type searchArgs struct {
	Query string `json:"query" jsonschema:"words that describe the tool you need"`
}

type searchHit struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Toolset     string `json:"toolset"`
}

type searchReply struct {
	Loaded  []searchHit `json:"loaded"`
	Message string      `json:"message"`
}

// NewSearch returns a search toolset over lib that loads up to
// maxResults tools per search. It accepts [OnSearch], [SearchName] and
// [SearchID].
func NewSearch(lib *Library, maxResults int, opts ...SearchOption) (*SearchToolset, error) {
	c, err := newSearchCore(lib, maxResults, "tool_search", nil, opts)
	if err != nil {
		return nil, err
	}
	s := &SearchToolset{searchCore: c}
	s.tool, err = NewContextFunc(SearchToolName, s.search, WithDescription(
		"Search the tool library by keywords. Matching tools become available on your next turn."))
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *SearchToolset) search(_ context.Context, tc *ToolContext, a searchArgs) (searchReply, error) {
	q := strings.TrimSpace(a.Query)
	if q == "" {
		s.emit(tc, SearchRecord{Outcome: SearchFailed, Toolset: s.name, SessionID: tc.SessionID, RunID: tc.RunID, Query: a.Query, Error: "empty query"})
		return searchReply{}, Feedback("The search query is empty. Call " + SearchToolName + " again with words that describe the tool you need.")
	}
	hits := s.match(q)
	if len(hits) == 0 {
		s.emit(tc, SearchRecord{Outcome: SearchNoMatch, Toolset: s.name, SessionID: tc.SessionID, RunID: tc.RunID, Query: q})
		return searchReply{Loaded: []searchHit{}, Message: fmt.Sprintf("No tool matches %q. Try other words.", q)}, nil
	}
	r := s.load(tc, q, hits)
	s.emit(tc, r)
	reply := searchReply{Loaded: make([]searchHit, len(hits))}
	for i, t := range hits {
		reply.Loaded[i] = searchHit{Name: t.def.Name, Description: t.def.Description, Toolset: t.info.ID}
	}
	reply.Message = "These tools are now available and can be called from your next turn: " + strings.Join(r.Tools, ", ") + "."
	return reply, nil
}

// Info returns the toolset's name and id (see [SearchID]).
func (s *SearchToolset) Info() ToolsetInfo { return s.info() }

// info is the identity of a search or proxy toolset: the [SearchID], or
// the name standing in for it.
func (c *searchCore) info() ToolsetInfo {
	if c.id != "" {
		return ToolsetInfo{Name: c.name, ID: c.id}
	}
	return ToolsetInfo{Name: c.name, ID: c.name, ImplicitID: true}
}

// Prepare returns the search tool and the tools tc's session has loaded,
// in load order. The first preparation of a session emits the
// initialized record.
func (s *SearchToolset) Prepare(_ context.Context, tc *ToolsetContext) (Preparation, error) {
	if tc == nil {
		tc = &ToolsetContext{}
	}
	s.initialize(tc)
	s.mu.Lock()
	var names []string
	if st := s.sessions[tc.SessionID]; st != nil {
		names = st.tools
	}
	tools := make([]Tool, 0, len(names)+1)
	tools = append(tools, s.tool)
	for _, n := range names {
		tools = append(tools, s.lib.byName[n].tool)
	}
	s.mu.Unlock()
	return Preparation{Tools: tools, Instructions: []Instruction{{Group: s.name,
		Text: fmt.Sprintf("More tools exist than are listed. Call %s with keywords to load the ones you need.", SearchToolName)}}}, nil
}
