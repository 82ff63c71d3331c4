package toolsets_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

type recorder struct {
	mu  sync.Mutex
	got []toolsets.SearchRecord
}

func (r *recorder) record(rec toolsets.SearchRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec)
}

func (r *recorder) outcomes() []toolsets.SearchOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []toolsets.SearchOutcome
	for _, g := range r.got {
		out = append(out, g.Outcome)
	}
	return out
}

func searchLibrary(t *testing.T) *toolsets.Library {
	t.Helper()
	tickets, err := toolsets.New("tickets", []toolsets.Tool{namedTool(t, "fetch_ticket"), namedTool(t, "close_ticket")}, toolsets.WithID("tickets-v1"))
	if err != nil {
		t.Fatal(err)
	}
	lib, err := toolsets.NewLibrary(t.Context(), staticSet(t, "workspace", "read_file", "write_file"), tickets)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func TestSearchToolset(t *testing.T) {
	lib := searchLibrary(t)
	rec := &recorder{}
	var progress []string
	s, err := toolsets.NewSearch(lib, 5, toolsets.OnSearch(rec.record))
	if err != nil {
		t.Fatal(err)
	}
	tc := &toolsets.ToolsetContext{SessionID: "s1", RunID: "r1"}
	reg := func() *toolsets.Registry {
		r := toolsets.NewRegistry()
		if err := r.AddToolset(t.Context(), preparedSetOf(t, s, tc)); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if diff := cmp.Diff([]string{toolsets.SearchToolName}, reg().Names()); diff != "" {
		t.Fatalf("initial tools (-want +got):\n%s", diff)
	}
	steps := []struct {
		name    string
		query   string
		kind    toolsets.Kind
		tools   []string // visible on the next preparation
		outcome toolsets.SearchOutcome
	}{
		{"ticket search loads ticket tools", "ticket", toolsets.KindSuccess, []string{"search_tools", "fetch_ticket", "close_ticket"}, toolsets.SearchLoaded},
		{"no match", "kubernetes", toolsets.KindSuccess, []string{"search_tools", "fetch_ticket", "close_ticket"}, toolsets.SearchNoMatch},
		{"empty query is feedback", "  ", toolsets.KindFeedback, []string{"search_tools", "fetch_ticket", "close_ticket"}, toolsets.SearchFailed},
		{"read loads read_file", "read a file", toolsets.KindSuccess, []string{"search_tools", "fetch_ticket", "close_ticket", "read_file", "write_file"}, toolsets.SearchLoaded},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"query": st.query})
			ret := reg().Call(t.Context(), toolsets.Invocation{Name: toolsets.SearchToolName, Arguments: args, SessionID: "s1", RunID: "r1",
				Emitter: toolsets.EmitterFunc(func(p toolsets.Progress) { progress = append(progress, p.Name) })})
			if ret.Kind != st.kind {
				t.Fatalf("kind %s: %s", ret.Kind, ret.ModelContent())
			}
			if diff := cmp.Diff(st.tools, reg().Names()); diff != "" {
				t.Errorf("next tools (-want +got):\n%s", diff)
			}
			if got := rec.outcomes(); got[len(got)-1] != st.outcome {
				t.Errorf("last record %s, want %s", got[len(got)-1], st.outcome)
			}
		})
	}
	if got := rec.outcomes(); got[0] != toolsets.SearchInitialized || strings.Count(strings.Join(outcomeStrings(got), " "), "initialized") != 1 {
		t.Errorf("records %v: want one initialized first", got)
	}
	if diff := cmp.Diff([]string{"tool_search.loaded", "tool_search.no_match", "tool_search.failed", "tool_search.loaded"}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}

	// Session state survives export and restore, into a fresh toolset.
	st := s.State("s1")
	want := toolsets.SearchState{LoadedTools: []string{"fetch_ticket", "close_ticket", "read_file", "write_file"}, LoadedNamespaces: []string{"tickets-v1", "workspace"}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Fatalf("state (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(st.Export())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	back, err := toolsets.SearchStateFrom(m)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := toolsets.NewSearch(lib, 5)
	if err := fresh.Restore("s1", back); err != nil {
		t.Fatal(err)
	}
	p, _ := fresh.Prepare(t.Context(), tc)
	if diff := cmp.Diff([]string{"search_tools", "fetch_ticket", "close_ticket", "read_file", "write_file"}, toolNames(p)); diff != "" {
		t.Errorf("restored tools (-want +got):\n%s", diff)
	}
	if err := fresh.Restore("s2", toolsets.SearchState{LoadedTools: []string{"gone"}}); err == nil || !strings.Contains(err.Error(), `"gone"`) {
		t.Errorf("restore of an unknown tool: %v", err)
	}
	fresh.Forget("s1")
	if got := fresh.State("s1"); len(got.LoadedTools) != 0 {
		t.Errorf("state after Forget = %+v", got)
	}
	if p, _ := s.Prepare(t.Context(), &toolsets.ToolsetContext{SessionID: "other"}); len(p.Tools) != 1 {
		t.Errorf("another session sees %d tools", len(p.Tools))
	}
}

func outcomeStrings(os []toolsets.SearchOutcome) []string {
	var out []string
	for _, o := range os {
		out = append(out, string(o))
	}
	return out
}

// preparedSetOf prepares ts for tc now, for a registry.
func preparedSetOf(t *testing.T, ts toolsets.Toolset, tc *toolsets.ToolsetContext) preparedSet {
	t.Helper()
	p, err := toolsets.Resolve(t.Context(), ts, tc)
	if err != nil {
		t.Fatal(err)
	}
	return preparedSet{ts.Info(), p}
}

func TestSearchStateFrom(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want toolsets.SearchState
		bad  bool
	}{
		{"empty", nil, toolsets.SearchState{}, false},
		{"strings", map[string]any{toolsets.StateLoadedTools: []string{"a"}}, toolsets.SearchState{LoadedTools: []string{"a"}}, false},
		{"decoded JSON", map[string]any{toolsets.StateLoadedNamespaces: []any{"ns"}}, toolsets.SearchState{LoadedNamespaces: []string{"ns"}}, false},
		{"not a list", map[string]any{toolsets.StateLoadedTools: "a"}, toolsets.SearchState{}, true},
		{"not strings", map[string]any{toolsets.StateLoadedTools: []any{1.0}}, toolsets.SearchState{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toolsets.SearchStateFrom(tt.in)
			if (err != nil) != tt.bad {
				t.Fatalf("err = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewSearchRejects(t *testing.T) {
	lib := searchLibrary(t)
	tests := []struct {
		name string
		lib  *toolsets.Library
		max  int
		opts []toolsets.SearchOption
		is   error
	}{
		{"nil library", nil, 5, nil, toolsets.ErrInvalidDefinition},
		{"zero results", lib, 0, nil, toolsets.ErrInvalidDefinition},
		{"bad name", lib, 5, []toolsets.SearchOption{toolsets.SearchName("a b")}, toolsets.ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := toolsets.NewSearch(tt.lib, tt.max, tt.opts...); !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
}
