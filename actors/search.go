package actors

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// searcher is a tool-search or tool-proxy toolset (toolsets.NewSearch,
// toolsets.NewProxy): it keeps per-session loaded state that the session
// restores from its log.
type searcher interface {
	toolsets.Toolset
	State(sessionID string) toolsets.SearchState
	Restore(sessionID string, st toolsets.SearchState) error
	Library() *toolsets.Library
}

// findSearcher returns the searcher ts is, or wraps.
func findSearcher(ts toolsets.Toolset) (searcher, bool) {
	for range toolsets.MaxNesting + 1 {
		if s, ok := ts.(searcher); ok {
			return s, true
		}
		u, ok := ts.(interface{ Unwrap() toolsets.Toolset })
		if !ok {
			return nil, false
		}
		ts = u.Unwrap()
	}
	return nil, false
}

// restoreSearch gives the run's search toolsets the session's loaded state
// from the log (tool_search.loaded events) when they hold none for the
// session: after a restart, or in a session restored from an archive.
func (a *sessionActor) restoreSearch(m *runMem) {
	for _, lc := range m.lcs {
		s, ok := findSearcher(lc.Toolset())
		if !ok {
			continue
		}
		logged := a.st.Search[s.Info().Name]
		if logged == nil || len(logged.LoadedTools) == 0 || len(s.State(a.id).LoadedTools) > 0 {
			continue
		}
		if err := s.Restore(a.id, *logged); err != nil {
			a.h.log.Warn("restore tool search state", "session", a.id, "toolset", s.Info().Name, "err", err)
		}
	}
}

// searchInitialized returns the tool_search.initialized events of the
// run's search toolsets the session has not recorded yet.
func (a *sessionActor) searchInitialized(m *runMem) []record {
	var out []record
	for _, lc := range m.lcs {
		s, ok := findSearcher(lc.Toolset())
		if !ok || a.st.SearchInitialized[s.Info().Name] {
			continue
		}
		defs := s.Library().Definitions()
		names := make([]string, len(defs))
		for i, d := range defs {
			names[i] = d.Name
		}
		out = append(out, newRecord(events.TypeToolSearchInitialized, a.id, m.id, "", events.ToolSearchInitialized{Toolset: s.Info().Name, Searchable: names}))
	}
	return out
}

// searchRecord turns the tool_search.* progress a search or proxy tool
// emitted into its tool_search.{outcome} event.
func searchRecord(session, run, call string, p *toolsets.Progress) (record, bool) {
	if p == nil || !strings.HasPrefix(p.Name, "tool_search.") {
		return record{}, false
	}
	var sr toolsets.SearchRecord
	if err := json.Unmarshal(p.Data, &sr); err != nil {
		return record{}, false
	}
	switch sr.Outcome {
	case toolsets.SearchLoaded:
		return newRecord(events.TypeToolSearchLoaded, session, run, call, events.ToolSearchLoaded{Query: sr.Query, Tools: sr.Tools, Toolset: sr.Toolset, Namespaces: sr.Namespaces}), true
	case toolsets.SearchNoMatch:
		return newRecord(events.TypeToolSearchNoMatch, session, run, call, events.ToolSearchNoMatch{Query: sr.Query, Toolset: sr.Toolset}), true
	case toolsets.SearchFailed:
		return newRecord(events.TypeToolSearchFailed, session, run, call, events.ToolSearchFailed{Query: sr.Query, Toolset: sr.Toolset, Error: events.ErrorInfo{Kind: "search", Message: sr.Error}}), true
	}
	return record{}, false
}

// applySearch folds a tool_search.* event into the session's search state.
func (s *SessionState) applySearch(rec record) error {
	switch rec.Type {
	case events.TypeToolSearchInitialized:
		d, err := decode[events.ToolSearchInitialized](rec)
		if err != nil {
			return err
		}
		if s.SearchInitialized == nil {
			s.SearchInitialized = map[string]bool{}
		}
		s.SearchInitialized[d.Toolset] = true
	case events.TypeToolSearchLoaded:
		d, err := decode[events.ToolSearchLoaded](rec)
		if err != nil {
			return err
		}
		if s.Search == nil {
			s.Search = map[string]*toolsets.SearchState{}
		}
		st := s.Search[d.Toolset]
		if st == nil {
			st = &toolsets.SearchState{}
			s.Search[d.Toolset] = st
		}
		for _, t := range d.Tools {
			if !slices.Contains(st.LoadedTools, t) {
				st.LoadedTools = append(st.LoadedTools, t)
			}
		}
		for _, n := range d.Namespaces {
			if !slices.Contains(st.LoadedNamespaces, n) {
				st.LoadedNamespaces = append(st.LoadedNamespaces, n)
			}
		}
	}
	return nil
}

// LoadedSearchState is what the session has loaded through tool search and
// tool proxies (all of them, in load order), as recorded in its
// tool_search.loaded events. Its Export gives the session-state entries
// tool_search_loaded_tools and tool_search_loaded_namespaces.
func (s *SessionState) LoadedSearchState() toolsets.SearchState {
	var out toolsets.SearchState
	names := make([]string, 0, len(s.Search))
	for n := range s.Search {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		st := s.Search[n]
		for _, t := range st.LoadedTools {
			if !slices.Contains(out.LoadedTools, t) {
				out.LoadedTools = append(out.LoadedTools, t)
			}
		}
		for _, ns := range st.LoadedNamespaces {
			if !slices.Contains(out.LoadedNamespaces, ns) {
				out.LoadedNamespaces = append(out.LoadedNamespaces, ns)
			}
		}
	}
	return out
}

// validateOutput runs the output validators over text and returns why the
// first one rejected it, "" when none did.
func validateOutput(ctx context.Context, validators []OutputValidator, text string) string {
	for _, v := range validators {
		if v == nil {
			continue
		}
		err := v(ctx, text)
		if err == nil {
			continue
		}
		var mr *toolsets.ModelRetryError
		if errors.As(err, &mr) {
			return mr.Message
		}
		return err.Error()
	}
	return ""
}

// outputBudget is how many outputs of a run may be rejected.
func outputBudget(spec *AgentSpec) int {
	if spec.OutputRetries > 0 {
		return spec.OutputRetries
	}
	return defaultOutputRetries
}
