package events_test

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// samples holds a filled data value of every catalogue type.
var samples = map[events.Type]any{
	events.TypeRunStarted:   events.RunStarted{Agent: "planner", Input: json.RawMessage(`{"q":"weather in Paris"}`), ParentRunID: "run-0"},
	events.TypeRunWaiting:   events.RunWaiting{Reason: "approval", ToolCallIDs: []string{"call-1"}},
	events.TypeRunResumed:   events.RunResumed{ToolCallIDs: []string{"call-1"}},
	events.TypeRunCompleted: events.RunCompleted{Output: json.RawMessage(`"sunny"`), Usage: &events.Usage{Requests: 2, InputTokens: 120, OutputTokens: 30}},
	events.TypeRunFailed:    events.RunFailed{Error: events.ErrorInfo{Kind: "model", Message: "rate limited"}},
	events.TypeRunCancelled: events.RunCancelled{Reason: "user", By: "alice"},
	events.TypeRunHandoff:   events.RunHandoff{From: "triage", To: "billing", ToolCallID: "call-2"},

	events.TypeModelRequest:  events.ModelRequest{Model: "m1", Messages: json.RawMessage(`[{"role":"user","text":"hi"}]`), Tools: []string{"search"}},
	events.TypeModelResponse: events.ModelResponse{Model: "m1", Message: json.RawMessage(`{"role":"assistant"}`), FinishReason: "tool_calls", ToolCallIDs: []string{"call-1"}, Usage: &events.Usage{InputTokens: 10, Details: map[string]int64{"reasoning": 3}}},

	events.TypeModelDelta: events.ModelDelta{Step: 2, Seq: 3, Text: "Sun", ToolCalls: []events.ToolCallDelta{{Index: 0, ID: "call-1", Name: "search", Arguments: `{"q":`}}},

	events.TypeToolRequested: events.ToolRequested{Tool: "search", Toolset: "web", Arguments: json.RawMessage(`{"q":"paris"}`)},
	events.TypeToolStarted:   events.ToolStarted{Tool: "search", Attempt: 1, Node: "node-a"},
	events.TypeToolRetried:   events.ToolRetried{Tool: "search", Attempt: 1, Error: events.ErrorInfo{Kind: "timeout", Message: "no answer in 5s"}, Delay: 250 * time.Millisecond},
	events.TypeToolReturned:  events.ToolReturned{Tool: "search", Return: json.RawMessage(`{"content":[{"type":"text","text":"<b>3</b> & more"}]}`), Attempt: 2},
	events.TypeToolProgress:  events.ToolProgress{Tool: "search", Message: "page 2", Progress: 2, Total: 5},

	events.TypeApprovalRequested: events.ApprovalRequested{Tool: "delete", Arguments: json.RawMessage(`{"path":"/tmp/x"}`), Reason: "destructive"},
	events.TypeApprovalDecided:   events.ApprovalDecided{Approved: true, By: "alice", Arguments: json.RawMessage(`{"path":"/tmp/y"}`)},
	events.TypeDecisionRefused: events.DecisionRefused{Code: "wrong_decision", Message: `reviewed arguments of "call-1" do not fit the tool's schema`, Run: "run-9",
		Decisions: []events.RefusedDecision{{ID: "call-1", Action: "approve", By: "alice", Reason: "ok", Arguments: json.RawMessage(`{"path":7}`), Result: json.RawMessage(`"x"`)}}},

	events.TypeDeferredRequested: events.DeferredRequested{Tool: "sign", Arguments: json.RawMessage(`{}`), Metadata: json.RawMessage(`{"ticket":7}`)},
	events.TypeDeferredResolved:  events.DeferredResolved{Return: json.RawMessage(`"signed"`), IsError: false},

	events.TypeElicitationRequested: events.ElicitationRequested{Tool: "book", Arguments: json.RawMessage(`{}`), Message: "Which date?", Schema: json.RawMessage(`{"type":"object"}`), Metadata: json.RawMessage(`{"request_state":"abc"}`)},
	events.TypeElicitationAnswered:  events.ElicitationAnswered{Action: "accept", Content: json.RawMessage(`{"date":"2026-12-24"}`), By: "alice"},

	events.TypeToolsetInitialized: events.ToolsetInitialized{Toolset: "web", Tools: []string{"search", "fetch"}},
	events.TypeToolsetRefreshed:   events.ToolsetRefreshed{Toolset: "web", Tools: []string{"search"}, Removed: []string{"fetch"}},
	events.TypeToolsetClosed:      events.ToolsetClosed{Toolset: "web", Reason: "session ended"},
	events.TypeToolsetUnavailable: events.ToolsetUnavailable{Toolset: "mcp", Error: events.ErrorInfo{Message: "connection refused"}, RetryAt: new(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC))},
	events.TypeToolsetFailed:      events.ToolsetFailed{Toolset: "mcp", Error: events.ErrorInfo{Kind: "auth", Message: "bad token"}},

	events.TypeToolSearchInitialized: events.ToolSearchInitialized{Toolset: "all", Searchable: []string{"a", "b"}},
	events.TypeToolSearchLoaded:      events.ToolSearchLoaded{Query: "pdf", Tools: []string{"pdf_read"}},
	events.TypeToolSearchNoMatch:     events.ToolSearchNoMatch{Query: "fax"},
	events.TypeToolSearchFailed:      events.ToolSearchFailed{Query: "x", Error: events.ErrorInfo{Message: "index unavailable"}},

	events.TypeErrorHandlerRan: events.ErrorHandlerRan{Tool: "book_room", Handler: "release_room", Reason: "failed", Error: &events.ErrorInfo{Message: "room service down"}},

	events.TypeUsageSnapshot: events.UsageSnapshot{Scope: "session", Usage: events.Usage{Requests: 4, ToolCalls: 3, CacheReadTokens: 9}},
}

func TestCatalogueIsCovered(t *testing.T) {
	for _, typ := range events.Types() {
		if _, ok := samples[typ]; !ok {
			t.Errorf("no sample for %s", typ)
		}
	}
	if len(samples) != len(events.Types()) {
		t.Errorf("%d samples for %d types", len(samples), len(events.Types()))
	}
}

// TestTypeNames: type strings are dotted lowercase tokens usable as NATS
// subject suffixes.
func TestTypeNames(t *testing.T) {
	token := regexp.MustCompile(`^[a-z][a-z_]*(\.[a-z][a-z_]*)+$`)
	for _, typ := range events.Types() {
		if !token.MatchString(string(typ)) {
			t.Errorf("type %q is not dotted lowercase tokens", typ)
		}
		if v, ok := typ.SchemaVersion(); !ok || v < 1 {
			t.Errorf("%s: SchemaVersion() = %d, %v", typ, v, ok)
		}
		if !typ.Known() {
			t.Errorf("%s is not Known", typ)
		}
	}
	for _, typ := range []events.Type{"", "run", "run.start", "Run.Started", "tool.returned "} {
		if typ.Known() {
			t.Errorf("%q is Known", typ)
		}
		if _, ok := typ.SchemaVersion(); ok {
			t.Errorf("%q has a schema version", typ)
		}
	}
}

// TestDataStructs: every exported field of every data struct has a
// snake_case JSON tag, so the recorded shape is explicit.
func TestDataStructs(t *testing.T) {
	tag := regexp.MustCompile(`^[a-z][a-z0-9_]*(,omitempty)?$`)
	seen := map[reflect.Type]bool{}
	var check func(rt reflect.Type)
	check = func(rt reflect.Type) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || rt.Kind() == reflect.Map {
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct || seen[rt] || rt.PkgPath() != reflect.TypeFor[events.Event]().PkgPath() {
			return
		}
		seen[rt] = true
		for f := range rt.Fields() {
			if !tag.MatchString(f.Tag.Get("json")) {
				t.Errorf("%s.%s has JSON tag %q", rt.Name(), f.Name, f.Tag.Get("json"))
			}
			check(f.Type)
		}
	}
	for _, v := range samples {
		check(reflect.TypeOf(v))
	}
}

// TestCatalogueDocument: CATALOGUE.md lists every type with its data
// struct.
func TestCatalogueDocument(t *testing.T) {
	doc, err := os.ReadFile("CATALOGUE.md")
	if err != nil {
		t.Fatal(err)
	}
	for typ, data := range samples {
		v, _ := typ.SchemaVersion()
		row := "| `" + string(typ) + "` | `" + reflect.TypeOf(data).Name() + "` | " + strconv.Itoa(v) + " |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("CATALOGUE.md has no row %q", row)
		}
	}
}

func TestNewDecodeRoundTrip(t *testing.T) {
	for typ, data := range samples {
		t.Run(string(typ), func(t *testing.T) {
			ev, err := events.New(typ, data, events.WithSession("s1"))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			got, err := events.Decode(ev)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(data, got); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
			// A pointer to the struct works as well.
			ptr := reflect.New(reflect.TypeOf(data))
			ptr.Elem().Set(reflect.ValueOf(data))
			ev2, err := events.New(typ, ptr.Interface())
			if err != nil {
				t.Fatalf("New with pointer: %v", err)
			}
			if string(ev2.Data) != string(ev.Data) {
				t.Errorf("New with pointer data %s, with value %s", ev2.Data, ev.Data)
			}
		})
	}
}
