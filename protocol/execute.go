package protocol

import (
	"context"
	"encoding/json"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// ExecuteCall executes call req through reg and reports on report, as a
// node does for its local calls and a remote tool worker for its: started / retried reports
// of the attempts after the first (for tools wrapped with ObservedTool),
// progress reports, then one returned report. report is called from the
// calling goroutine and from the tool's emitter. meta is the run's
// metadata shown to the tool (nil for none). The reports carry no CallID
// or Tool: the caller sets them.
func ExecuteCall(ctx context.Context, reg *toolsets.Registry, req ToolRequest, meta map[string]any, report func(ToolReport)) {
	ctx = context.WithValue(ctx, observerKey{}, observer(report))
	ret := reg.Call(ctx, toolsets.Invocation{
		CallID: req.CallID, Name: req.Name, Arguments: req.Arguments,
		RunID: req.RunID, SessionID: req.SessionID, ConversationID: req.SessionID, Metadata: meta,
		Approval: req.Approval, Elicitation: req.Elicitation, ModelRetries: req.ModelRetries, Code: req.Code,
		Emitter: toolsets.EmitterFunc(func(p toolsets.Progress) {
			report(ToolReport{Type: ReportProgress, Attempt: p.Attempt, Progress: &p})
		}),
	})
	report(ToolReport{Type: ReportReturned, Attempt: ret.Attempts, Return: &ret})
}

// ObservedTool wraps t so that ExecuteCall reports the start of each retry
// and each failed attempt the registry will retry. A node wraps the tools
// of its runs so; a worker wraps the tools it serves.
func ObservedTool(t toolsets.Tool) toolsets.Tool { return Observed{t} }

// Observed is the tool ObservedTool returns: Tool, whose retries report
// that their attempt started (the node records the first attempt as
// started when it sends the call), and whose failed attempts the registry
// will retry report that they are retried, when it runs under ExecuteCall.
type Observed struct{ toolsets.Tool }

// Unwrap returns the wrapped tool.
func (o Observed) Unwrap() toolsets.Tool { return o.Tool }

// observer receives the started / retried reports of the attempts of a
// call; it travels in the call's context.
type observer func(ToolReport)

type observerKey struct{}

// Call implements toolsets.Tool.
func (o Observed) Call(ctx context.Context, tc *toolsets.ToolContext, args json.RawMessage) (any, error) {
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
