package actors

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

const sid, rid = "s", "r"

func ev(t events.Type, call string, data any) events.Event { return newEvent(t, sid, rid, call, data) }

func ret(call, tool string, kind toolsets.Kind, content string) events.Event {
	f := kind.Flags()
	r := toolsets.Return{CallID: call, ToolName: tool, Kind: kind, Success: f.Success, IsError: f.IsError, Content: json.RawMessage(content), MaxAttempts: 2, Attempts: 1}
	return returnedEvent(sid, rid, r).Event
}

func response(calls ...llm.ToolCall) events.Event {
	resp := llm.Response{ToolCalls: calls}
	if len(calls) == 0 {
		resp.Text = "done"
	}
	msg, _ := json.Marshal(resp.Message())
	var ids []string
	for _, c := range calls {
		ids = append(ids, c.ID)
	}
	return ev(events.TypeModelResponse, "", events.ModelResponse{Message: msg, ToolCallIDs: ids})
}

func given(t *testing.T, evs ...events.Event) *SessionState {
	t.Helper()
	st := NewSessionState(sid)
	for i, e := range evs {
		e.Version = uint64(i + 1)
		if err := st.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func started() events.Event {
	return ev(events.TypeRunStarted, "", events.RunStarted{Agent: "a", Input: json.RawMessage(`"hi"`)})
}

func TestFold(t *testing.T) {
	a := llm.ToolCall{ID: "a", Name: "deploy", Arguments: json.RawMessage(`{}`)}
	b := llm.ToolCall{ID: "b", Name: "q", Arguments: json.RawMessage(`{}`)}
	batch := []events.Event{started(), ev(events.TypeModelRequest, "", events.ModelRequest{}), response(a, b),
		ev(events.TypeToolRequested, "a", events.ToolRequested{Tool: "deploy"}), ev(events.TypeToolRequested, "b", events.ToolRequested{Tool: "q"})}
	tests := []struct {
		name    string
		given   []events.Event
		pending []string
		need    bool
		retry   string
		status  RunStatus
	}{
		{name: "started needs the model", given: []events.Event{started()}, need: true, status: StatusRunning},
		{name: "a call suspends, the other returns", given: append(append([]events.Event{}, batch...),
			ret("a", "deploy", toolsets.KindApprovalRequired, `"x"`), ret("b", "q", toolsets.KindSuccess, `1`)),
			pending: []string{"a"}, status: StatusRunning},
		{name: "batch done needs the model", given: append(append([]events.Event{}, batch...),
			ret("a", "deploy", toolsets.KindSuccess, `1`), ret("b", "q", toolsets.KindSuccess, `1`)), need: true, status: StatusRunning},
		{name: "retry budget exceeded", given: append(append([]events.Event{}, batch...),
			ret("a", "deploy", toolsets.KindSuccess, `1`), ret("b", "q", toolsets.KindModelRetry, `"again"`),
			ev(events.TypeModelRequest, "", events.ModelRequest{}), response(b), ev(events.TypeToolRequested, "b", events.ToolRequested{Tool: "q"}),
			ret("b", "q", toolsets.KindModelRetry, `"again"`)), need: true, retry: "q", status: StatusRunning},
		{name: "completed", given: []events.Event{started(), ev(events.TypeModelRequest, "", events.ModelRequest{}), response(),
			ev(events.TypeRunCompleted, "", events.RunCompleted{Output: json.RawMessage(`"done"`)})}, status: StatusCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := given(t, tt.given...)
			r := st.Run(rid)
			var pend []string
			for _, p := range r.Pending() {
				pend = append(pend, p.ID)
			}
			if d := cmp.Diff(tt.pending, pend); d != "" {
				t.Errorf("pending (-want +got):\n%s", d)
			}
			if r.NeedModel != tt.need || r.RetryExceeded != tt.retry || r.Status != tt.status {
				t.Errorf("need %v retry %q status %s; want %v %q %s", r.NeedModel, r.RetryExceeded, r.Status, tt.need, tt.retry, tt.status)
			}
		})
	}
}

// Given a run waiting for the approval of a (tool deploy, parameters
// {"env": string}), when a resume comes, then its events or the typed
// refusal.
func TestDecisions(t *testing.T) {
	a := llm.ToolCall{ID: "a", Name: "deploy"}
	waiting := []events.Event{started(), ev(events.TypeModelRequest, "", events.ModelRequest{}), response(a),
		ev(events.TypeToolRequested, "a", events.ToolRequested{Tool: "deploy"}), ret("a", "deploy", toolsets.KindApprovalRequired, `"x"`),
		ev(events.TypeApprovalRequested, "a", events.ApprovalRequested{Tool: "deploy"}), ev(events.TypeRunWaiting, "", events.RunWaiting{Reason: "approval"})}
	approved := append(slices.Clone(waiting), ev(events.TypeApprovalDecided, "a", events.ApprovalDecided{Approved: true, By: "alice"}), ev(events.TypeRunResumed, "", events.RunResumed{ToolCallIDs: []string{"a"}}))
	// a was decided and ran; the next response's call b waits for
	// approval.
	pendingAgain := append(slices.Clone(approved), ret("a", "deploy", toolsets.KindSuccess, `"ok"`),
		ev(events.TypeModelRequest, "", events.ModelRequest{}), response(llm.ToolCall{ID: "b", Name: "deploy"}),
		ev(events.TypeToolRequested, "b", events.ToolRequested{Tool: "deploy"}), ret("b", "deploy", toolsets.KindApprovalRequired, `"x"`),
		ev(events.TypeApprovalRequested, "b", events.ApprovalRequested{Tool: "deploy"}), ev(events.TypeRunWaiting, "", events.RunWaiting{Reason: "approval"}))
	deploy, err := toolsets.NewFunc("deploy", func(_ context.Context, a struct {
		Env string `json:"env"`
	}) (string, error) {
		return a.Env, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(deploy); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		given   []events.Event // default: waiting
		run     string         // default: rid
		when    []Decision
		noCheck bool // the tools are not prepared
		err     error
		types   []events.Type
	}{
		{name: "missing", err: ErrMissingDecisions},
		{name: "unknown", when: []Decision{{ID: "zz", Action: ActionApprove}}, err: ErrUnknownDecision},
		{name: "duplicate", when: []Decision{{ID: "a", Action: ActionApprove}, {ID: "a", Action: ActionDeny}}, err: ErrDuplicateDecision},
		{name: "wrong", when: []Decision{{ID: "a", Action: ActionComplete}}, err: ErrWrongDecision},
		{name: "reviewed arguments not an object", when: []Decision{{ID: "a", Action: ActionApprove, Arguments: json.RawMessage(`[1]`)}}, err: ErrWrongDecision},
		{name: "reviewed arguments fail the schema", when: []Decision{{ID: "a", Action: ActionApprove, Arguments: json.RawMessage(`{"env":7}`)}}, err: ErrWrongDecision},
		{name: "reviewed arguments that cannot be checked", noCheck: true, when: []Decision{{ID: "a", Action: ActionApprove, Arguments: json.RawMessage(`{"env":"prod"}`)}}, err: ErrWrongDecision},
		{name: "unknown run", run: "nope", when: []Decision{{ID: "a", Action: ActionApprove}}, err: ErrUnknownRun},
		{name: "already decided, run going on", given: approved, when: []Decision{{ID: "a", Action: ActionDeny}}, err: ErrAlreadyDecided},
		{name: "not waiting", given: approved, when: []Decision{{ID: "zz", Action: ActionDeny}}, err: ErrNotWaiting},
		{name: "already decided, run waiting again", given: pendingAgain, when: []Decision{{ID: "a", Action: ActionApprove}, {ID: "b", Action: ActionApprove}}, err: ErrAlreadyDecided},
		{name: "approve", when: []Decision{{ID: "a", Action: ActionApprove, By: "u"}}, types: []events.Type{events.TypeApprovalDecided, events.TypeRunResumed}},
		{name: "approve with reviewed arguments that fit", when: []Decision{{ID: "a", Action: ActionApprove, By: "u", Arguments: json.RawMessage(`{"env":"prod"}`)}}, types: []events.Type{events.TypeApprovalDecided, events.TypeRunResumed}},
		{name: "deny", when: []Decision{{ID: "a", Action: ActionDeny, By: "u"}}, types: []events.Type{events.TypeApprovalDecided, events.TypeRunResumed, events.TypeToolReturned}},
		{name: "the pending item again", given: pendingAgain, when: []Decision{{ID: "b", Action: ActionApprove}}, types: []events.Type{events.TypeApprovalDecided, events.TypeRunResumed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := tt.given
			if evs == nil {
				evs = waiting
			}
			run := tt.run
			if run == "" {
				run = rid
			}
			check := reg.CheckArguments
			if tt.noCheck {
				check = nil
			}
			recs, err := decide(sid, given(t, evs...).Run(run), ResumeCommand{RunID: run, Decisions: tt.when}, check)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			var ce *CommandError
			if tt.err != nil && !errors.As(err, &ce) {
				t.Fatalf("err = %T, want a *CommandError", err)
			}
			var got []events.Type
			for _, e := range recs {
				got = append(got, e.Type)
			}
			if d := cmp.Diff(tt.types, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

// A decision.refused changes nothing in the fold, whatever run it names.
func TestFoldIgnoresRefusedDecisions(t *testing.T) {
	refused := func(run string) events.Event {
		return newEvent(events.TypeDecisionRefused, sid, run, "zz", events.DecisionRefused{Code: "unknown_decision", Message: "no", Decisions: []events.RefusedDecision{{ID: "zz", Action: ActionApprove, By: "mallory"}}})
	}
	base := []events.Event{started(), ev(events.TypeModelRequest, "", events.ModelRequest{}), response(llm.ToolCall{ID: "a", Name: "deploy"}),
		ev(events.TypeToolRequested, "a", events.ToolRequested{Tool: "deploy"}), ret("a", "deploy", toolsets.KindApprovalRequired, `"x"`),
		ev(events.TypeApprovalRequested, "a", events.ApprovalRequested{Tool: "deploy"}), ev(events.TypeRunWaiting, "", events.RunWaiting{Reason: "approval"})}
	want := given(t, base...)
	for _, run := range []string{rid, "", "another-run"} {
		got := given(t, append(slices.Clone(base), refused(run))...)
		if got.Version != want.Version+1 {
			t.Errorf("run %q: version %d, want %d", run, got.Version, want.Version+1)
		}
		if d := cmp.Diff(want.Runs, got.Runs, cmp.AllowUnexported(RunState{}, CallState{}), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("run %q: runs (-want +got):\n%s", run, d)
		}
	}
}

// A split append (appendSteps) that stopped after any prefix of a
// response's events is completed from the state: the missing tool.requested
// in model order, then the usage.snapshot the response implies.
func TestCompletion(t *testing.T) {
	a := llm.ToolCall{ID: "a", Name: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`)}
	b := llm.ToolCall{ID: "b", Name: "q", Arguments: json.RawMessage(`{}`)}
	twoCalls := llm.Response{ToolCalls: []llm.ToolCall{a, b}}
	msg, _ := json.Marshal(twoCalls.Message())
	resp := ev(events.TypeModelResponse, "", events.ModelResponse{Message: msg, ToolCallIDs: []string{"a", "b"},
		Usage: &events.Usage{Requests: 1, InputTokens: 10, OutputTokens: 3}})
	due := events.Usage{Requests: 1, InputTokens: 10, OutputTokens: 3, ToolCalls: 2}
	head := []events.Event{started(), ev(events.TypeModelRequest, "", events.ModelRequest{}), resp}
	reqA := ev(events.TypeToolRequested, "a", events.ToolRequested{Tool: "deploy", Arguments: a.Arguments})
	reqB := ev(events.TypeToolRequested, "b", events.ToolRequested{Tool: "q", Arguments: b.Arguments})
	snap := ev(events.TypeUsageSnapshot, "", events.UsageSnapshot{Scope: "run", Usage: due})
	tests := []struct {
		name  string
		given []events.Event
		want  []string
	}{
		{name: "response only", given: head, want: []string{"tool.requested a deploy", "tool.requested b q", "usage.snapshot"}},
		{name: "one call requested", given: append(slices.Clone(head), reqA), want: []string{"tool.requested b q", "usage.snapshot"}},
		{name: "calls requested", given: append(slices.Clone(head), reqA, reqB), want: []string{"usage.snapshot"}},
		{name: "complete", given: append(slices.Clone(head), reqA, reqB, snap)},
		{name: "final text", given: []events.Event{started(), ev(events.TypeModelRequest, "", events.ModelRequest{}), response()}, want: []string{"usage.snapshot"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := given(t, tt.given...)
			recs := completion(sid, st.Run(rid), nil)
			var got []string
			for _, rec := range recs {
				line := string(rec.Type)
				if d, ok := rec.data.(events.ToolRequested); ok {
					line += " " + rec.ToolCallID + " " + d.Tool
				}
				got = append(got, line)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("completion (-want +got):\n%s", d)
			}
			// Applying the completion gives the state of the whole append.
			for _, rec := range recs {
				rec.Version = st.Version + 1
				if err := st.applyRecord(rec); err != nil {
					t.Fatal(err)
				}
			}
			if rest := completion(sid, st.Run(rid), nil); len(rest) != 0 {
				t.Errorf("completion after completing = %d events", len(rest))
			}
			if r := st.Run(rid); len(r.Calls) > 0 {
				if d := cmp.Diff(due, r.Usage); d != "" {
					t.Errorf("usage after completing (-want +got):\n%s", d)
				}
			}
		})
	}
}

// Folding the typed values the session actor built gives the same state as
// decoding the same events read back from the log.
func TestTypedFoldMatchesDecoded(t *testing.T) {
	a := llm.ToolCall{ID: "a", Name: "deploy", Arguments: json.RawMessage(`{}`)}
	resp := llm.Response{ToolCalls: []llm.ToolCall{a}}
	msg, _ := json.Marshal(resp.Message())
	respRec := newRecord(events.TypeModelResponse, sid, rid, "", events.ModelResponse{Message: msg, ToolCallIDs: []string{"a"}})
	respRec.extra = resp.Message()
	startRec := newRecord(events.TypeRunStarted, sid, rid, "", events.RunStarted{Agent: "x", Input: json.RawMessage(`"hi"`)})
	startRec.extra = "hi"
	r := toolsets.Return{CallID: "a", ToolName: "deploy", Kind: toolsets.KindSuccess, Success: true, Content: json.RawMessage(`1`), Attempts: 1, MaxAttempts: 1}
	doneRec := newRecord(events.TypeRunCompleted, sid, rid, "", events.RunCompleted{Output: json.RawMessage(`"ok"`)})
	doneRec.extra = "ok"
	recs := []record{startRec, newRecord(events.TypeModelRequest, sid, rid, "", events.ModelRequest{}), respRec,
		newRecord(events.TypeToolRequested, sid, rid, "a", events.ToolRequested{Tool: "deploy"}),
		returnedEvent(sid, rid, r), newRecord(events.TypeModelRequest, sid, rid, "", events.ModelRequest{}), doneRec}
	typed, decoded := NewSessionState(sid), NewSessionState(sid)
	for i, rec := range recs {
		rec.Version = uint64(i + 1)
		if err := typed.applyRecord(rec); err != nil {
			t.Fatal(err)
		}
		if err := decoded.Apply(rec.Event); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(decoded, typed, cmp.AllowUnexported(llm.Message{})); d != "" {
		t.Errorf("typed fold (-decoded +typed):\n%s", d)
	}
}

// withData returns e with its Data replaced by data.
func withData(e events.Event, data string) events.Event {
	e.Data = json.RawMessage(data)
	return e
}

// The envelope the host publishes is the one json.Marshal gives.
func TestEncodeEnvelope(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   events.Event
	}{
		// Data as json.Marshal writes it (HTML-escaped): AppendJSON splices
		// Data in as it is, and the runtime's own data (events.NewData) is
		// not HTML-escaped, which json.Marshal of the envelope would do.
		{"with data", withData(ev(events.TypeToolRequested, "a", events.ToolRequested{Tool: "deploy"}), `{"tool":"deploy","arguments":{"env":"\u003cprod\u003e"}}`)},
		{"without data", events.Event{Type: events.TypeRunResumed, SessionID: sid}},
		{"every id", events.Event{ID: uuid.Must(uuid.NewV7()), Type: events.TypeRunResumed, SessionID: sid, RunID: rid, ToolCallID: "c",
			CorrelationID: "corr", CausationID: "cause", SchemaVersion: 2, Time: time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.FixedZone("x", 3600))}},
		{"ids to escape", events.Event{Type: events.TypeRunResumed, SessionID: "a\"b<c>&d\\e\u00e9\x01\xff", RunID: "\u2028"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.ev.Stream, tc.ev.Version, tc.ev.Position = events.SessionStream(sid), 3, 9
			want, err := json.Marshal(&tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeEnvelope(tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("envelope (-json.Marshal +encodeEnvelope):\n%s", d)
			}
		})
	}
}
