package actors

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

func limit(n int64) *int64 { return &n }

// Given a run awaiting its model's answer to step 1, when the reply comes,
// then the response and its usage are recorded and the run completes,
// asks again, runs a batch or fails.
func TestCoreModelReply(t *testing.T) {
	awaiting := []events.Event{started(), requestEv()}
	cost := llm.Usage{Requests: 1, InputTokens: 10, OutputTokens: 5}
	used := events.Usage{Requests: 1, InputTokens: 10, OutputTokens: 5}
	text := &llm.Response{Text: "done", Usage: cost}
	calls := &llm.Response{ToolCalls: []llm.ToolCall{callOf("a", "echo", `{}`), callOf("b", "restart", `{}`)}, Usage: cost}
	calling := used
	calling.ToolCalls = 2
	msgLen := func(resp *llm.Response) int { b, _ := json.Marshal(resp.Message()); return len(b) }
	respEv := func(d events.ModelResponse) evt { return evt{Type: events.TypeModelResponse, Data: d} }
	snapshot := func(u events.Usage) evt {
		return evt{Type: events.TypeUsageSnapshot, Data: events.UsageSnapshot{Scope: "run", Usage: u}}
	}
	textResp := events.ModelResponse{Usage: &events.Usage{Requests: 1, InputTokens: 10, OutputTokens: 5}, ToolCallIDs: []string{}}
	callsResp := events.ModelResponse{Usage: &events.Usage{Requests: 1, InputTokens: 10, OutputTokens: 5}, ToolCallIDs: []string{"a", "b"}}
	tests := []struct {
		name    string
		given   []events.Event // default: awaiting
		spec    func(*AgentSpec)
		maxMsg  int
		reply   modelReply // runID rid and step 1 unless set
		events  []evt
		split   bool
		carryOn bool
	}{
		{name: "final text", reply: modelReply{resp: text}, split: true, events: []evt{respEv(textResp), snapshot(used),
			{Type: events.TypeRunCompleted, Data: events.RunCompleted{Output: json.RawMessage(`"done"`), Usage: &used}}}},
		{name: "tool calls", reply: modelReply{resp: calls}, split: true, carryOn: true, events: []evt{respEv(callsResp),
			{Type: events.TypeToolRequested, Call: "a", Data: events.NewToolRequested("echo", "", json.RawMessage(`{}`))},
			{Type: events.TypeToolRequested, Call: "b", Data: events.NewToolRequested("restart", "ops", json.RawMessage(`{}`))},
			snapshot(calling)}},
		{name: "output rejected", reply: modelReply{resp: text, rejected: "too short"}, split: true, carryOn: true, events: []evt{
			respEv(events.ModelResponse{Usage: textResp.Usage, ToolCallIDs: []string{}, OutputRejected: "too short"}), snapshot(used)}},
		{name: "model error", reply: modelReply{err: errors.New("boom")}, events: []evt{failed(FailModel, "boom", events.Usage{})}},
		{name: "invalid response", reply: modelReply{resp: &llm.Response{ToolCalls: []llm.ToolCall{{Name: "echo"}}}},
			events: []evt{{Type: events.TypeRunFailed}}},
		{name: "total tokens", spec: func(s *AgentSpec) { s.Limits.TotalTokens = limit(14) }, reply: modelReply{resp: text},
			events: []evt{respEv(textResp), snapshot(used), failed(FailUsageLimit, "the run exceeded its token limit", used)}},
		{name: "input tokens", spec: func(s *AgentSpec) { s.Limits.InputTokens = limit(9) }, reply: modelReply{resp: calls},
			events: []evt{respEv(callsResp), snapshot(used), failed(FailUsageLimit, "the run exceeded its token limit", used)}},
		{name: "output tokens", spec: func(s *AgentSpec) { s.Limits.OutputTokens = limit(4) }, reply: modelReply{resp: text},
			events: []evt{respEv(textResp), snapshot(used), failed(FailUsageLimit, "the run exceeded its token limit", used)}},
		{name: "tokens within limits", spec: func(s *AgentSpec) { s.Limits.TotalTokens = limit(15) }, reply: modelReply{resp: text}, split: true,
			events: []evt{respEv(textResp), snapshot(used), {Type: events.TypeRunCompleted}}},
		{name: "tool call limit", spec: func(s *AgentSpec) { s.Limits.ToolCalls = limit(1) }, reply: modelReply{resp: calls},
			events: []evt{respEv(callsResp), snapshot(used), failed(FailUsageLimit, "the response asks for 2 tool calls; the run has used 0 of its limit of 1", used)}},
		{name: "a rejected output is no tool call", spec: func(s *AgentSpec) { s.Limits.ToolCalls = limit(0) }, reply: modelReply{resp: text, rejected: "no"},
			split: true, carryOn: true, events: []evt{{Type: events.TypeModelResponse}, snapshot(used)}},
		{name: "no tools", spec: func(s *AgentSpec) { s.Tools, s.Toolsets, s.ApprovalRequired = nil, nil, nil }, reply: modelReply{resp: calls},
			events: []evt{respEv(callsResp), snapshot(used), failed(FailNoTools, `the model called "echo" but the agent has no tools`, used)}},
		{name: "payload too large", maxMsg: 20, reply: modelReply{resp: calls}, events: []evt{
			failed(FailPayloadTooLarge, fmt.Sprintf("the model response of %d bytes exceeds the limit of 20 bytes", msgLen(calls)), used)}},
		{name: "a reply to another step", reply: modelReply{step: 2, resp: text}},
		{name: "a reply to another run", reply: modelReply{runID: "r2", resp: text}},
		{name: "a reply not awaited", given: append([]events.Event{started(), requestEv()}, response()), reply: modelReply{resp: text}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := coreAgent(t, tt.spec)
			evs := tt.given
			if evs == nil {
				evs = awaiting
			}
			st := given(t, evs...)
			f := factsOf(st, spec, prepared(t, spec))
			f.modelBusy = true
			mr := tt.reply
			if mr.runID == "" {
				mr.runID = rid
			}
			if mr.step == 0 {
				mr.step = 1
			}
			d := world{spec: spec, maxMsg: tt.maxMsg}.coreOf(st, f).modelReply(&mr)
			then(t, d, tt.events, nil, tt.carryOn)
			if d.split != tt.split {
				t.Errorf("split = %v, want %v", d.split, tt.split)
			}
			if len(tt.events) > 0 && (!d.newFacts || d.facts.modelBusy) {
				t.Errorf("the model is still busy after its reply: %+v", d.facts)
			}
		})
	}
}

// Given a run whose tools are being prepared, when the preparation's
// outcome comes, then its reports are recorded and the run requests its
// model (or carries its batch on), or fails.
func TestCorePrepared(t *testing.T) {
	spec := coreAgent(t, nil)
	prep := prepared(t, spec)
	initialized := toolsets.LifecycleReport{Name: "ops", State: toolsets.StateInitialized, ToolCount: 1}
	refreshed := toolsets.LifecycleReport{Name: "ops", State: toolsets.StateRefreshed, ToolCount: 1}
	failedRep := toolsets.LifecycleReport{Name: "ops", State: toolsets.StateFailed, Message: "down"}
	search := newRecord(events.TypeToolSearchInitialized, sid, rid, "", events.ToolSearchInitialized{Toolset: "find", Searchable: []string{"x"}})
	request := evt{Type: events.TypeModelRequest, Data: events.ModelRequest{Model: modelName(spec.Model), Tools: prep.Names}}
	pending := concat([]events.Event{started()}, batchOf(callOf("a", "echo", `{}`)))
	tests := []struct {
		name    string
		given   []events.Event // default: started
		last    *Prepared      // the previous inventory
		reply   preparedReply  // runID rid unless set
		search  []record
		events  []evt
		effects []effect
		carryOn bool
	}{
		{name: "first step", reply: preparedReply{prep: prep, reports: []toolsets.LifecycleReport{initialized}}, search: []record{search},
			events: []evt{{Type: events.TypeToolsetInitialized, Data: events.ToolsetInitialized{Toolset: "ops", Tools: []string{"restart"}, State: "initialized", ToolCount: 1}},
				{Type: events.TypeToolSearchInitialized}, request},
			effects: []effect{effCallModel{req: &llm.Request{Run: llm.RunInfo{SessionID: sid, RunID: rid, Step: 1}}}}},
		{name: "an unchanged refresh is not recorded", last: prep, reply: preparedReply{prep: prep, reports: []toolsets.LifecycleReport{refreshed}},
			events: []evt{request}, effects: []effect{effCallModel{req: &llm.Request{Run: llm.RunInfo{SessionID: sid, RunID: rid, Step: 1}}}}},
		{name: "for a batch", given: pending, reply: preparedReply{prep: prep, reports: []toolsets.LifecycleReport{initialized}},
			events: []evt{{Type: events.TypeToolsetInitialized}}, carryOn: true},
		{name: "failed", reply: preparedReply{err: errors.New("toolset ops: down"), reports: []toolsets.LifecycleReport{failedRep}},
			events: []evt{{Type: events.TypeToolsetFailed}, failed(FailToolset, "toolset ops: down", events.Usage{})}},
		{name: "policy entry matching nothing", reply: preparedReply{err: fmt.Errorf("policy: %w", toolsets.ErrUnmatchedSelector)},
			events: []evt{{Type: events.TypeRunFailed, Data: events.RunFailed{Error: events.ErrorInfo{Kind: FailPolicy, Message: "policy: " + toolsets.ErrUnmatchedSelector.Error()}, Usage: &events.Usage{}}}}},
		{name: "another run's", reply: preparedReply{runID: "r2", prep: prep}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := tt.given
			if evs == nil {
				evs = []events.Event{started()}
			}
			st := given(t, evs...)
			f := factsOf(st, spec, nil)
			f.preparing, f.last = true, tt.last
			p := tt.reply
			if p.runID == "" {
				p.runID = rid
			}
			d := world{spec: spec}.coreOf(st, f).prepared(&p, tt.search)
			then(t, d, tt.events, tt.effects, tt.carryOn)
			if p.runID == rid && (!d.newFacts || d.facts.preparing) {
				t.Errorf("still preparing: %+v", d.facts)
			}
			if p.runID == rid && p.err == nil && (d.facts.prep != prep || d.facts.last != prep) {
				t.Error("the inventory is not the step's")
			}
		})
	}
}

// encodeMessages writes what json.Marshal writes.
func TestEncodeMessagesIsJSONMarshal(t *testing.T) {
	for i, ms := range [][]llm.Message{
		nil,
		{},
		{llm.UserMessage("a <b> & \"c\" \u2028")},
		{llm.UserMessage("x"), {Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text{Text: "<t>"}, llm.ToolCall{ID: "c", Name: "n", Arguments: []byte(`{"h":"<&>"}`)}}}},
	} {
		got, err := encodeMessages(ms)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(ms)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
