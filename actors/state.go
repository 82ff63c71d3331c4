package actors

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// RunStatus is where a run stands. The set is closed.
type RunStatus string

// The run statuses.
const (
	StatusRunning   RunStatus = "running"
	StatusWaiting   RunStatus = "waiting"
	StatusCompleted RunStatus = "completed"
	StatusFailed    RunStatus = "failed"
	StatusCancelled RunStatus = "cancelled"
)

// Settled reports whether a run in status s is not running: it waits for
// decisions or has ended.
func (s RunStatus) Settled() bool { return s != StatusRunning && s != "" }

// Ended reports whether s is a final status.
func (s RunStatus) Ended() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// PendingKind says what a pending item waits for.
type PendingKind string

// The pending kinds.
const (
	PendingApproval    PendingKind = "approval"
	PendingDeferred    PendingKind = "deferred"
	PendingElicitation PendingKind = "elicitation"
)

// pendingKinds are the pending kinds in the order run.waiting names them.
var pendingKinds = []PendingKind{PendingApproval, PendingDeferred, PendingElicitation}

// SessionState is the state of a session: nothing but the fold of its
// events (Apply). The session actor is its only writer.
type SessionState struct {
	SessionID string
	// Version is the version of the last applied event: the expected
	// version of the next append.
	Version uint64
	// LastHash is the events.Hash of the last applied event ("" before
	// the first): the PrevHash the store gives the next appended event.
	LastHash string
	// Runs by id, and their ids in start order.
	Runs  map[string]*RunState
	Order []string
	// Active is the run that is running or waiting, "" when none.
	Active string
	// History is the conversation of the session's ended runs, carried
	// into the next run's model requests.
	History []llm.Message
	// Search is what each tool-search or tool-proxy toolset (by name) has
	// loaded for the session (tool_search.loaded events);
	// SearchInitialized the ones whose tool_search.initialized is
	// recorded. See LoadedSearchState.
	Search            map[string]*toolsets.SearchState
	SearchInitialized map[string]bool
	// Code are the durable variables of the session's code-mode programs
	// (core_code.go).
	Code CodeVariables
}

// RunState is the state of one run.
type RunState struct {
	ID     string
	Agent  string
	Prompt string
	// Metadata is the run's metadata from run.started (nil: none).
	Metadata map[string]any
	Status   RunStatus
	// Step counts the model requests made.
	Step int
	// Messages is the run's conversation: the prompt, the model's
	// responses and the tool returns, in order.
	Messages []llm.Message
	// NeedModel: the next thing to do is a model request.
	NeedModel bool
	// AwaitingModel: a model.request was recorded without its response.
	AwaitingModel bool
	// Final: the last response had no tool calls; Output is its text.
	Final  bool
	Output string
	// Batch is the current response's tool calls in model order, as
	// their tool.requested events are applied.
	Batch []*CallState
	// Calls are the tool calls of the last model response. A call with no
	// CallState in Batch has no tool.requested yet (a split append
	// stopped before it); the session actor completes it.
	Calls []llm.ToolCall
	// UsageDue is the run's usage once the last model response is counted,
	// while that response's usage.snapshot is not recorded yet; nil
	// otherwise.
	UsageDue *events.Usage
	// Decided holds the last decision recorded in this run for each call
	// id (approval.decided, deferred.resolved), for refusing a decision on
	// an item that was decided already.
	Decided map[string]*Decision
	// Retries counts the model retries used per tool in this run.
	Retries map[string]int
	// RetryExceeded names a tool whose model-retry budget is spent.
	RetryExceeded string
	// OutputRejections counts the final outputs an output validator
	// rejected in this run.
	OutputRejections int
	// SubrunRequests counts the model requests of the run's sub-runs
	// (the usage of deferred results), which count against Limits.Requests.
	SubrunRequests int64
	Usage          events.Usage
	Error          *events.ErrorInfo
	CancelReason   string
	// Handlers are the error handlers the run's calls registered
	// (core_handlers.go).
	Handlers []*HandlerState
}

// CallState is one tool call of the current batch.
type CallState struct {
	ID        string
	Tool      string
	Toolset   string
	Arguments json.RawMessage
	// Attempts is the highest attempt started.
	Attempts int
	// Return is the last return recorded for the call (possibly a
	// suspension).
	Return *toolsets.Return
	// Pending is set while the call waits for a decision.
	Pending PendingKind
	// Requested: the approval.requested / deferred.requested event of the
	// current suspension is recorded.
	Requested bool
	// Decision is the decision recorded for the current suspension.
	Decision *Decision
	// Parent is the code call whose program made this call ("" for a
	// call of the model), see core_code.go.
	Parent string
}

// Done reports whether the call has a final (non-suspending) return.
func (c *CallState) Done() bool {
	return c.Return != nil && !c.Return.Kind.Flags().Suspends
}

// NewSessionState returns the state of a session with no events.
func NewSessionState(sessionID string) *SessionState {
	return &SessionState{SessionID: sessionID, Runs: map[string]*RunState{}}
}

// Run returns the run with id, or nil.
func (s *SessionState) Run(id string) *RunState { return s.Runs[id] }

// ActiveRun returns the running or waiting run, or nil.
func (s *SessionState) ActiveRun() *RunState {
	if s.Active == "" {
		return nil
	}
	return s.Runs[s.Active]
}

// call returns the call id of the run's current batch, or nil.
func (r *RunState) call(id string) *CallState {
	for _, c := range r.Batch {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// Pending returns the items the run waits for, in model order.
func (r *RunState) Pending() []PendingItem {
	var out []PendingItem
	for _, c := range r.Batch {
		if c.Pending == "" || c.Return == nil {
			continue
		}
		it := PendingItem{ID: c.ID, Kind: c.Pending, Tool: c.Tool, Toolset: c.Toolset, Arguments: c.Arguments}
		if ctl := c.Return.Control; ctl != nil {
			it.Reason, it.Metadata = ctl.Reason, ctl.Metadata
		}
		out = append(out, it)
	}
	return out
}

// PendingItem is a tool call that waits for a human approval or an external
// result. Its ID is the tool call's id, unique among the run's pending items.
type PendingItem struct {
	ID        string          `json:"id"`
	Kind      PendingKind     `json:"kind"`
	Tool      string          `json:"tool"`
	Toolset   string          `json:"toolset,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

// batchDone reports whether every call has a final return.
func (r *RunState) batchDone() bool {
	for _, c := range r.Batch {
		if !c.Done() {
			return false
		}
	}
	return true
}

// Apply folds ev into the state. Events must come in version order; an
// event of an unknown run, or one that breaks the run's order, is an error
// (the stream is corrupt or another writer forked it).
func (s *SessionState) Apply(ev events.Event) error {
	return s.applyRecord(record{Event: ev})
}

// applyRecord is Apply for an event the session actor built: it folds the
// record's typed values when it has them.
func (s *SessionState) applyRecord(rec record) error { return s.applyHashed(rec, "") }

// applyHashed applies rec, whose hash as stored is hash (its store said
// so); "" means it is computed here.
func (s *SessionState) applyHashed(rec record, hash string) error {
	ev := rec.Event
	if ev.Version != 0 && ev.Version != s.Version+1 {
		return fmt.Errorf("apply %s: version %d after %d", ev.Type, ev.Version, s.Version)
	}
	if err := s.apply(rec); err != nil {
		return fmt.Errorf("apply %s v%d (run %s): %w", ev.Type, ev.Version, ev.RunID, err)
	}
	s.Version++
	if hash == "" {
		hash = events.Hash(ev)
	}
	s.LastHash = hash
	return nil
}

func decode[T any](rec record) (T, error) {
	if d, ok := rec.data.(T); ok {
		return d, nil // by value: a pointer to it would be an allocation per event
	}
	ev := rec.Event
	var v T
	if len(ev.Data) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		return v, fmt.Errorf("%w: %v", events.ErrMalformed, err)
	}
	return v, nil
}

func (s *SessionState) apply(rec record) error {
	ev := rec.Event
	if ev.Type == events.TypeRunStarted {
		d, err := decode[events.RunStarted](rec)
		if err != nil {
			return err
		}
		prompt, typed := rec.extra.(string)
		if !typed && len(d.Input) > 0 {
			var in string // decoded here only: prompt stays off the heap
			if err := json.Unmarshal(d.Input, &in); err != nil {
				return fmt.Errorf("%w: input: %v", events.ErrMalformed, err)
			}
			prompt = in
		}
		if _, dup := s.Runs[ev.RunID]; dup {
			return fmt.Errorf("run started twice")
		}
		r := &RunState{ID: ev.RunID, Agent: d.Agent, Prompt: prompt, Status: StatusRunning, NeedModel: true,
			Messages: []llm.Message{llm.UserMessage(prompt)}, Retries: map[string]int{}}
		if len(d.Metadata) > 0 {
			if err := json.Unmarshal(d.Metadata, &r.Metadata); err != nil {
				return fmt.Errorf("%w: metadata: %v", events.ErrMalformed, err)
			}
		}
		s.Runs[r.ID] = r
		s.Order = append(s.Order, r.ID)
		s.Active = r.ID
		return nil
	}
	if ev.Type == events.TypeDecisionRefused {
		// A refused resume changed nothing; it may name no run, or one
		// the session does not have.
		return nil
	}
	r := s.Runs[ev.RunID]
	if r == nil {
		return fmt.Errorf("%w: %q", ErrUnknownRun, ev.RunID)
	}
	switch ev.Type {
	case events.TypeToolsetInitialized, events.TypeToolsetRefreshed, events.TypeToolsetClosed,
		events.TypeToolsetUnavailable, events.TypeToolsetFailed, events.TypeToolProgress,
		events.TypeToolRetried:
		// Reports: no state of their own.
	case events.TypeToolSearchInitialized, events.TypeToolSearchLoaded, events.TypeToolSearchNoMatch, events.TypeToolSearchFailed:
		return s.applySearch(rec)
	case events.TypeUsageSnapshot:
		d, err := decode[events.UsageSnapshot](rec)
		if err != nil {
			return err
		}
		r.Usage, r.UsageDue = d.Usage, nil
	case events.TypeModelRequest:
		r.Step++
		r.NeedModel, r.AwaitingModel = false, true
	case events.TypeModelResponse:
		d, err := decode[events.ModelResponse](rec)
		if err != nil {
			return err
		}
		msg, typed := rec.extra.(llm.Message)
		if !typed {
			var m llm.Message // decoded here only: msg stays off the heap
			if err := json.Unmarshal(d.Message, &m); err != nil {
				return fmt.Errorf("%w: message: %v", events.ErrMalformed, err)
			}
			msg = m
		}
		r.AwaitingModel = false
		r.Messages = append(r.Messages, msg)
		r.Batch, r.Calls = nil, msg.ToolCalls()
		due := r.Usage
		if u := d.Usage; u != nil {
			due.Requests += u.Requests
			due.InputTokens += u.InputTokens
			due.OutputTokens += u.OutputTokens
			due.CacheReadTokens += u.CacheReadTokens
			due.CacheWriteTokens += u.CacheWriteTokens
		}
		due.ToolCalls += int64(len(d.ToolCallIDs))
		r.UsageDue = &due
		switch {
		case len(d.ToolCallIDs) == 0 && d.OutputRejected != "":
			// An output validator rejected the text: the model is asked
			// again with a retry prompt.
			r.OutputRejections++
			r.Messages = append(r.Messages, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.RetryPrompt{Message: d.OutputRejected, Retries: r.OutputRejections}}})
			r.NeedModel = true
		case len(d.ToolCallIDs) == 0:
			r.Final = true
			r.Output = textOf(msg)
		}
	case events.TypeToolRequested:
		d, err := decode[events.ToolRequested](rec)
		if err != nil {
			return err
		}
		r.Batch = append(r.Batch, &CallState{ID: ev.ToolCallID, Tool: d.Tool, Toolset: d.Toolset, Arguments: d.Args(), Parent: d.Parent})
		if d.Parent != "" {
			r.Usage.ToolCalls++ // a program's call counts like the model's
		}
	case events.TypeToolStarted:
		d, err := decode[events.ToolStarted](rec)
		if err != nil {
			return err
		}
		if c := r.call(ev.ToolCallID); c != nil {
			c.Attempts = max(c.Attempts, d.Attempt)
		}
	case events.TypeToolReturned:
		d, err := decode[events.ToolReturned](rec)
		if err != nil {
			return err
		}
		c := r.call(ev.ToolCallID)
		if c == nil {
			return fmt.Errorf("return of unknown call %q", ev.ToolCallID)
		}
		ret, typed := rec.extra.(toolsets.Return)
		if !typed {
			if err := json.Unmarshal(d.Return, &ret); err != nil {
				return fmt.Errorf("%w: return: %v", events.ErrMalformed, err)
			}
		}
		c.Return, c.Requested, c.Decision = &ret, false, nil
		c.Pending = ""
		s.foldCode(&ret)
		r.foldHandlers(c, &ret)
		switch ret.Kind {
		case toolsets.KindApprovalRequired:
			c.Pending = PendingApproval
		case toolsets.KindCallDeferred:
			c.Pending = PendingDeferred
		case toolsets.KindElicitationRequired:
			c.Pending = PendingElicitation
		}
		if r.batchDone() {
			r.finishBatch()
		}
	case events.TypeApprovalRequested, events.TypeDeferredRequested, events.TypeElicitationRequested:
		if c := r.call(ev.ToolCallID); c != nil {
			c.Requested = true
			// The arguments the request recorded (their canonical form)
			// are what the pending item shows and what the call runs
			// with once decided.
			if args, err := requestedArguments(rec); err != nil {
				return err
			} else if len(args) > 0 {
				c.Arguments = args
			}
		}
	case events.TypeErrorHandlerRan:
		return r.foldHandlerRan(rec)
	case events.TypeRunWaiting:
		r.Status = StatusWaiting
	case events.TypeApprovalDecided:
		d, err := decode[events.ApprovalDecided](rec)
		if err != nil {
			return err
		}
		c := r.call(ev.ToolCallID)
		if c == nil {
			return fmt.Errorf("decision on unknown call %q", ev.ToolCallID)
		}
		act := ActionDeny
		if d.Approved {
			act = ActionApprove
		}
		c.Decision = &Decision{ID: c.ID, Action: act, By: d.By, Authenticated: d.Authenticated, Reason: d.Reason, Arguments: d.Arguments}
		r.decided(c.Decision)
	case events.TypeDeferredResolved:
		d, err := decode[events.DeferredResolved](rec)
		if err != nil {
			return err
		}
		c := r.call(ev.ToolCallID)
		if c == nil {
			return fmt.Errorf("resolution of unknown call %q", ev.ToolCallID)
		}
		act := ActionComplete
		if d.IsError {
			act = ActionFail
		}
		c.Decision = &Decision{ID: c.ID, Action: act, By: d.By, Authenticated: d.Authenticated, Result: d.Return}
		r.decided(c.Decision)
		addUsage(&r.Usage, d.Usage)
		if d.Usage != nil {
			r.SubrunRequests += d.Usage.Requests
		}
	case events.TypeElicitationAnswered:
		d, err := decode[events.ElicitationAnswered](rec)
		if err != nil {
			return err
		}
		c := r.call(ev.ToolCallID)
		if c == nil {
			return fmt.Errorf("answer to unknown call %q", ev.ToolCallID)
		}
		answer, _ := json.Marshal(elicitAnswer{Action: d.Action, Content: d.Content})
		c.Decision = &Decision{ID: c.ID, Action: ActionAnswer, By: d.By, Authenticated: d.Authenticated, Result: answer}
		r.decided(c.Decision)
	case events.TypeRunResumed:
		r.Status = StatusRunning
	case events.TypeRunCompleted:
		d, err := decode[events.RunCompleted](rec)
		if err != nil {
			return err
		}
		if out, typed := rec.extra.(string); typed {
			r.Output = out
		} else if len(d.Output) > 0 {
			_ = json.Unmarshal(d.Output, &r.Output)
		}
		s.end(r, StatusCompleted)
	case events.TypeRunFailed:
		d, err := decode[events.RunFailed](rec)
		if err != nil {
			return err
		}
		r.Error = &d.Error
		s.end(r, StatusFailed)
	case events.TypeRunHandoff:
		d, err := decode[events.RunHandoff](rec)
		if err != nil {
			return err
		}
		r.Agent = d.To
		// The run goes on with the version of the new agent it recorded.
		md := maps.Clone(r.Metadata)
		if md == nil {
			md = map[string]any{}
		}
		if d.Version != "" {
			md[MetaAgentVersion] = d.Version
		} else {
			delete(md, MetaAgentVersion)
		}
		r.Metadata = md
	case events.TypeRunCancelled:
		d, err := decode[events.RunCancelled](rec)
		if err != nil {
			return err
		}
		r.CancelReason = d.Reason
		s.end(r, StatusCancelled)
	default:
		return fmt.Errorf("%w: %q", events.ErrUnknownType, ev.Type)
	}
	return nil
}

// decided remembers d as the last decision on its call in the run.
func (r *RunState) decided(d *Decision) {
	if r.Decided == nil {
		r.Decided = map[string]*Decision{}
	}
	r.Decided[d.ID] = d
}

// finishBatch appends the batch's returns to the conversation, in model
// order, and counts model retries against the per-tool budget.
func (r *RunState) finishBatch() {
	msg := llm.Message{Role: llm.RoleUser}
	for _, c := range r.Batch {
		if c.Parent != "" {
			continue // a program's call: the model sees its program's return
		}
		ret := c.Return
		switch ret.Kind {
		case toolsets.KindInvalidArguments, toolsets.KindModelRetry:
			r.Retries[c.Tool]++
			if r.Retries[c.Tool] > ret.MaxAttempts-1 && r.RetryExceeded == "" {
				r.RetryExceeded = c.Tool
			}
			msg.Parts = append(msg.Parts, llm.RetryPrompt{CallID: c.ID, Name: c.Tool, Message: contentText(ret), Retries: r.Retries[c.Tool]})
		case toolsets.KindNotFound, toolsets.KindNotExposed:
			msg.Parts = append(msg.Parts, llm.RetryPrompt{CallID: c.ID, Name: c.Tool, Message: contentText(ret)})
		default:
			msg.Parts = append(msg.Parts, llm.ToolReturn{CallID: c.ID, Name: c.Tool, Content: ret.ModelContent(), IsError: ret.IsError})
		}
	}
	if len(msg.Parts) > 0 {
		r.Messages = append(r.Messages, msg)
	}
	r.NeedModel = true
}

// end closes run r with status st and carries its valid conversation into
// the session history: a trailing response whose calls have no returns is
// dropped so that the history stays a valid conversation.
func (s *SessionState) end(r *RunState, st RunStatus) {
	r.Status, r.NeedModel, r.AwaitingModel = st, false, false
	if s.Active == r.ID {
		s.Active = ""
	}
	msgs := r.Messages
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleAssistant && len(msgs[n-1].ToolCalls()) > 0 {
		msgs = msgs[:n-1]
	}
	s.History = append(s.History, msgs...)
}

// Conversation returns the messages of a model request of run r: the
// session history, then the run's own messages.
func (s *SessionState) Conversation(r *RunState) []llm.Message {
	return slices.Concat(s.History, r.Messages)
}

func textOf(m llm.Message) string {
	var out string
	for _, p := range m.Parts {
		if t, ok := p.(llm.Text); ok {
			out += t.Text
		}
	}
	return out
}

func contentText(ret *toolsets.Return) string {
	return llm.ToolReturn{Content: ret.ModelContent()}.ContentText()
}

// requestedArguments returns the arguments an approval.requested or
// deferred.requested record carries.
func requestedArguments(rec record) (json.RawMessage, error) {
	if rec.Type == events.TypeApprovalRequested {
		d, err := decode[events.ApprovalRequested](rec)
		if err != nil {
			return nil, err
		}
		return d.Arguments, nil
	}
	if rec.Type == events.TypeElicitationRequested {
		d, err := decode[events.ElicitationRequested](rec)
		if err != nil {
			return nil, err
		}
		return d.Arguments, nil
	}
	d, err := decode[events.DeferredRequested](rec)
	if err != nil {
		return nil, err
	}
	return d.Arguments, nil
}

// elicitAnswer is the Result of an answer decision.
type elicitAnswer struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}
