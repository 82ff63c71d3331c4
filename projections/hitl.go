package projections

import (
	"io"
	"maps"
	"slices"
	"time"

	"github.com/weft-run/weft/events"
)

// QueueItem is a pending item with its age.
type QueueItem struct {
	PendingItem
	// Age is how long the item has waited at the queue's clock time, in
	// whole milliseconds (AgeMillis) and as a Go duration string (Age).
	AgeMillis int64  `json:"age_ms"`
	Age       string `json:"age"`
	// Parents is the chain of calls above the item's run when it is a
	// sub-run (an agent called as a tool), the root run's first: decide
	// the item on its own session; its run's end resumes the parents.
	Parents []ParentCall `json:"parents,omitempty"`
}

// ParentCall is a parent run's tool call that started a sub-run.
type ParentCall struct {
	RunRef
	ToolCallID string `json:"tool_call_id"`
}

// Queue is the HITL-queue projection: every pending approval
// (approval.requested) and deferred call (deferred.requested) across all
// sessions, removed when it is decided (approval.decided), resolved
// (deferred.resolved) or its run ends (run.completed, run.failed,
// run.cancelled). A refused decision (decision.refused) does not change
// it.
type Queue struct {
	checkpoint
	now     func() time.Time
	items   map[queueKey]PendingItem
	suspend map[queueKey]string // reason of a call's suspending return
	parents map[RunRef]ParentCall
}

type queueKey struct{ session, call string }

var _ Projection = (*Queue)(nil)

// QueueOption configures NewQueue.
type QueueOption func(*Queue)

// WithClock sets the clock ages are measured against (default time.Now).
func WithClock(now func() time.Time) QueueOption { return func(q *Queue) { q.now = now } }

// NewQueue returns an empty HITL queue.
func NewQueue(opts ...QueueOption) *Queue {
	q := &Queue{now: time.Now, items: map[queueKey]PendingItem{}, suspend: map[queueKey]string{}, parents: map[RunRef]ParentCall{}}
	for _, o := range opts {
		o(q)
	}
	return q
}

// Name returns "hitl".
func (q *Queue) Name() string { return "hitl" }

// Reset empties the queue (it keeps the clock).
func (q *Queue) Reset() {
	q.pos = 0
	q.items = map[queueKey]PendingItem{}
	q.suspend = map[queueKey]string{}
	q.parents = map[RunRef]ParentCall{}
}

// Items returns the pending items in request order (log position), aged
// at the queue's clock.
func (q *Queue) Items() []QueueItem {
	now := q.now()
	pend := sortedPending(maps.Values(q.items))
	out := make([]QueueItem, len(pend))
	for i, p := range pend {
		age := max(now.Sub(p.RequestedAt), 0)
		out[i] = QueueItem{PendingItem: p, AgeMillis: age.Milliseconds(), Age: age.Round(time.Millisecond).String(), Parents: q.chain(RunRef{p.SessionID, p.RunID})}
	}
	return out
}

// Render writes Items as a JSON array.
func (q *Queue) Render(w io.Writer) error { return render(w, q.Name(), q.Items()) }

// Apply folds ev into the queue.
func (q *Queue) Apply(ev Decoded) error {
	if q.seen(ev.Position) {
		return nil
	}
	k := queueKey{ev.SessionID, ev.ToolCallID}
	switch d := ev.Data.(type) {
	case events.RunStarted:
		if d.ParentSessionID != "" {
			q.parents[RunRef{ev.SessionID, ev.RunID}] = ParentCall{RunRef: RunRef{d.ParentSessionID, d.ParentRunID}, ToolCallID: d.ParentToolCallID}
		}
	case events.ToolReturned:
		if r := ev.suspendReason(d.Return); r != "" {
			q.suspend[k] = r
		}
	case events.ApprovalRequested:
		q.items[k] = PendingItem{Kind: PendingApproval, SessionID: ev.SessionID, RunID: ev.RunID, ToolCallID: ev.ToolCallID,
			Tool: d.Tool, Arguments: d.Arguments, Reason: d.Reason, Metadata: d.Metadata, RequestedAt: ev.Time, Position: ev.Position}
	case events.DeferredRequested:
		q.items[k] = PendingItem{Kind: PendingDeferred, SessionID: ev.SessionID, RunID: ev.RunID, ToolCallID: ev.ToolCallID,
			Tool: d.Tool, Arguments: d.Arguments, Reason: q.suspend[k], Metadata: d.Metadata, RequestedAt: ev.Time, Position: ev.Position}
		delete(q.suspend, k)
	case events.ElicitationRequested:
		q.items[k] = PendingItem{Kind: PendingElicitation, SessionID: ev.SessionID, RunID: ev.RunID, ToolCallID: ev.ToolCallID,
			Tool: d.Tool, Arguments: d.Arguments, Message: d.Message, Schema: d.Schema, Metadata: d.Metadata, RequestedAt: ev.Time, Position: ev.Position}
	case events.ApprovalDecided, events.DeferredResolved, events.ElicitationAnswered:
		delete(q.items, k)
		delete(q.suspend, k)
	case events.RunCompleted, events.RunFailed, events.RunCancelled:
		for key, p := range q.items {
			if p.SessionID == ev.SessionID && p.RunID == ev.RunID {
				delete(q.items, key)
			}
		}
		for key := range q.suspend {
			if key.session == ev.SessionID {
				delete(q.suspend, key)
			}
		}
	}
	q.pos = ev.Position
	return nil
}

// chain returns the calls above run ref, the root's first (nil for a root
// run).
func (q *Queue) chain(ref RunRef) []ParentCall {
	var out []ParentCall
	for range len(q.parents) {
		p, ok := q.parents[ref]
		if !ok {
			break
		}
		out = append(out, p)
		ref = p.RunRef
	}
	slices.Reverse(out)
	return out
}
