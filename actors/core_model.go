package actors

import (
	"encoding/json"
	"fmt"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
)

// modelReply is the outcome of a model request the session actor made
// (callModel): an input of the core.
type modelReply struct {
	carriedFlag
	runID string
	step  int
	resp  *llm.Response
	err   error
	// rejected is why an output validator rejected the response's final
	// text, "" when none did.
	rejected string
	// capability is why a capability hook failed (a model-request hook:
	// no resp; a run-complete hook: with resp), "" when none did.
	capability string
	// amended is set when model-request hooks changed the request.
	amended *events.Amendment
}

// requestModel records model.request (after reports, the preparation's)
// and calls the model for the step it opens.
func (k core) requestModel(r *RunState, spec *AgentSpec, reports []record) decision {
	if _, err := k.selection(r); err != nil {
		return k.fail(r, FailPolicy, err.Error())
	}
	if _, err := k.expand(r); err != nil {
		return k.fail(r, FailToolset, "the instructions' tool placeholders: "+err.Error())
	}
	conv := k.st.Conversation(r)
	// Record the messages added since the previous request: the full
	// conversation of any request is a fold of the stream.
	added := r.Messages
	if r.Step > 0 && len(added) > 0 {
		added = added[len(added)-1:]
	} else {
		added = conv
	}
	msgs, err := encodeMessages(added)
	if err != nil {
		return k.fail(r, FailInternal, "encode messages: "+err.Error())
	}
	ev := newRecord(events.TypeModelRequest, k.session, r.ID, "", events.ModelRequest{Model: modelName(spec.Model), Messages: msgs, Tools: k.requestNames(r)})
	// model.request opens step r.Step+1; it changes no message.
	req := k.modelRequestOf(r, spec, r.Step+1, conv)
	return decision{recs: append(reports, ev), split: true, effects: one(effCallModel{req: req})}
}

// modelRequest is the request of run r's step, with the prepared tools.
func (k core) modelRequest(r *RunState, spec *AgentSpec, step int) *llm.Request {
	return k.modelRequestOf(r, spec, step, k.st.Conversation(r))
}

func (k core) modelRequestOf(r *RunState, spec *AgentSpec, step int, conv []llm.Message) *llm.Request {
	return &llm.Request{Instructions: k.instructions(r), Messages: conv, Tools: k.requestTools(r),
		Settings: spec.Settings, Run: llm.RunInfo{SessionID: k.session, RunID: r.ID, Step: step}}
}

func modelName(model llm.Model) string { return llm.NameOf(model) }

// modelReply decides on the model's reply to the current step: the
// response is recorded with the usage it brings, and then the run fails
// (an error, an invalid or too large response, a limit), completes (a
// final text), asks again (a rejected output) or has a batch to run. A
// reply to another run or step, or one not awaited, is dropped.
func (k core) modelReply(mr *modelReply) decision {
	r := k.st.ActiveRun()
	if r == nil || r.ID != mr.runID || k.f.run != mr.runID || r.Step != mr.step || !r.AwaitingModel {
		return decision{}
	}
	f, spec := k.f, k.f.spec
	f.modelBusy = false
	if mr.capability != "" && mr.resp == nil {
		return k.fail(r, FailCapability, mr.capability).with(f)
	}
	if mr.err != nil {
		return k.fail(r, FailModel, mr.err.Error()).with(f)
	}
	resp := mr.resp
	if err := resp.Validate(); err != nil {
		return k.fail(r, FailInvalidResponse, err.Error()).with(f)
	}
	usage := r.Usage
	usage.Requests += resp.Usage.Requests
	usage.InputTokens += resp.Usage.InputTokens
	usage.OutputTokens += resp.Usage.OutputTokens
	usage.CacheReadTokens += resp.Usage.CacheReadTokens
	usage.CacheWriteTokens += resp.Usage.CacheWriteTokens
	message := resp.Message()
	msg, err := message.MarshalJSON() // compact and escaped as json.Marshal writes it
	if err != nil {
		return k.fail(r, FailInternal, "encode response: "+err.Error()).with(f)
	}
	if lim := k.maxMsg; len(msg) > lim {
		return decision{recs: []record{k.failRecord(r, usage, FailPayloadTooLarge,
			fmt.Sprintf("the model response of %d bytes exceeds the limit of %d bytes", len(msg), lim))}}.with(f)
	}
	ids := make([]string, len(resp.ToolCalls))
	for i, tc := range resp.ToolCalls {
		ids[i] = tc.ID
	}
	ru := resp.Usage
	respRec := newRecord(events.TypeModelResponse, k.session, r.ID, "", events.ModelResponse{
		Model: resp.Model, Message: msg, FinishReason: string(resp.FinishReason), ToolCallIDs: ids,
		Usage: &events.Usage{Requests: ru.Requests, InputTokens: ru.InputTokens, OutputTokens: ru.OutputTokens,
			CacheReadTokens: ru.CacheReadTokens, CacheWriteTokens: ru.CacheWriteTokens},
		Attempts: resp.Attempts, OutputRejected: mr.rejected, RequestAmended: mr.amended})
	respRec.extra = message
	recs := make([]record, 1, len(resp.ToolCalls)+3) // the response, its calls, the usage, an end
	recs[0] = respRec
	snapshot := func(u events.Usage) record {
		return newRecord(events.TypeUsageSnapshot, k.session, r.ID, "", events.UsageSnapshot{Scope: "run", Usage: u})
	}
	if kind, text := k.responseLimit(spec, usage, resp); kind != "" {
		// One append: a prefix would run calls the run must not run.
		recs = append(recs, snapshot(usage), k.failRecord(r, usage, kind, text))
		return decision{recs: recs}.with(f)
	}
	switch {
	case len(resp.ToolCalls) == 0 && mr.rejected != "":
		// The output was rejected: the model gets a retry prompt.
		recs = append(recs, snapshot(usage))
		return decision{recs: recs, split: true, carryOn: true}.with(f)
	case len(resp.ToolCalls) == 0 && mr.capability != "":
		// A run-complete hook failed: the response and the failure in
		// one append.
		recs = append(recs, snapshot(usage), k.failRecord(r, usage, FailCapability, mr.capability))
		return decision{recs: recs}.with(f)
	case len(resp.ToolCalls) == 0:
		out, _ := json.Marshal(resp.Text)
		final := usage // its own variable: taking usage's address would put it on the heap on every path
		done := newRecord(events.TypeRunCompleted, k.session, r.ID, "", events.RunCompleted{Output: out, Usage: &final})
		done.extra = resp.Text
		recs = append(recs, snapshot(usage), done)
		return decision{recs: recs, split: true}.with(f)
	}
	usage.ToolCalls += int64(len(resp.ToolCalls))
	for _, tc := range resp.ToolCalls {
		recs = append(recs, newRecord(events.TypeToolRequested, k.session, r.ID, tc.ID, events.NewToolRequested(tc.Name, k.f.prep.ToolsetOf[tc.Name].Name, tc.Arguments)))
	}
	recs = append(recs, snapshot(usage))
	return decision{recs: recs, split: true, carryOn: true}.with(f)
}

// prepared decides on a preparation's outcome p for the active run: a
// failed one fails the run (with the reports that explain it); a
// successful one becomes the step's inventory, its reports (and search,
// the tool_search.initialized events of search toolsets first prepared in
// the session) are recorded, and the run requests its model or carries on.
func (k core) prepared(p *preparedReply, search []record) decision {
	if k.f.run == "" || k.f.run != p.runID {
		return decision{}
	}
	f := k.f
	f.preparing = false
	r := k.st.Run(f.run)
	if p.err != nil {
		recs := toolsetReports(k.session, f.run, f.last, nil, p.reports)
		recs = append(recs, k.failRecord(r, r.Usage, prepareFailKind(p.err), p.err.Error()))
		return decision{recs: recs}.with(f)
	}
	reports := append(toolsetReports(k.session, f.run, f.last, p.prep, p.reports), search...)
	f.prep, f.last = p.prep, p.prep
	if r.NeedModel {
		k.f = f
		return k.requestModel(r, f.spec, reports).with(f)
	}
	return decision{recs: reports, split: true, carryOn: true}.with(f)
}

// encodeMessages is json.Marshal of ms, without its second pass over
// what llm.Message.MarshalJSON wrote (compact and escaped already).
func encodeMessages(ms []llm.Message) ([]byte, error) {
	if ms == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 128*len(ms)+2)
	b = append(b, '[')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = m.AppendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}
