package actors

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// ExecuteCall executes call req through reg and reports on report, as a
// host's tool actor and a remote tool worker do: started / retried reports
// of the attempts after the first (for tools wrapped with ObservedTool),
// progress reports, then one returned report. report is called from the
// calling goroutine and from the tool's emitter. meta is the run's
// metadata shown to the tool (nil for none).
func ExecuteCall(ctx context.Context, reg *toolsets.Registry, req ToolRequest, meta map[string]any, report func(ToolReport)) {
	ctx = context.WithValue(ctx, observerKey{}, observer(report))
	ret := reg.Call(ctx, toolsets.Invocation{
		CallID: req.CallID, Name: req.Name, Arguments: req.Arguments,
		RunID: req.RunID, SessionID: req.SessionID, ConversationID: req.SessionID, Metadata: meta,
		Approval: req.Approval, ModelRetries: req.ModelRetries,
		Emitter: toolsets.EmitterFunc(func(p toolsets.Progress) {
			report(ToolReport{Type: ReportProgress, Attempt: p.Attempt, Progress: &p})
		}),
	})
	report(ToolReport{Type: ReportReturned, Attempt: ret.Attempts, Return: &ret})
}

// ObservedTool wraps t so that ExecuteCall reports the start of each retry
// and each failed attempt the registry will retry. A host wraps the tools
// of its runs so; a worker wraps the tools it serves.
func ObservedTool(t toolsets.Tool) toolsets.Tool { return observed{t} }

// errRunCancelled is the cause a run's context is cancelled with.
var errRunCancelled = errors.New("run cancelled")

// observer receives the started / retried reports of the attempts of a
// call; it travels in the call's context.
type observer func(ToolReport)

type observerKey struct{}

// observed wraps a tool so that each retry reports that its attempt
// started (the scheduler records the first attempt as started when it sends
// the call), and each failed attempt the registry will retry reports that
// it is retried.
type observed struct{ toolsets.Tool }

// Call implements toolsets.Tool.
func (o observed) Call(ctx context.Context, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
	obs, _ := ctx.Value(observerKey{}).(observer)
	if obs != nil && tc.Attempt > 1 {
		obs(ToolReport{Type: ReportStarted, Attempt: tc.Attempt})
	}
	v, err := o.Tool.Call(ctx, tc, args)
	// The registry's own rule: only an execution failure of a live attempt
	// is retried; an error after the attempt's context ended (its timeout,
	// a cancelled run) is a timeout or a cancellation, never retried.
	if obs != nil && tc.WillRetry(ctx, err) {
		obs(ToolReport{Type: ReportRetried, Attempt: tc.Attempt, Error: &events.ErrorInfo{Kind: string(toolsets.KindExecution), Message: err.Error(), Type: toolsets.ErrorType(err)}})
	}
	return v, err
}
