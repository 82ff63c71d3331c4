package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets"
)

// report is what a test compares of a ToolReport.
type report struct {
	Type    string
	Attempt int
	Detail  string // the progress name, the retried error's message, or the return's kind
}

func summarize(r ToolReport) report {
	s := report{Type: r.Type, Attempt: r.Attempt}
	switch {
	case r.Progress != nil:
		s.Detail = r.Progress.Name
	case r.Error != nil:
		s.Detail = r.Error.Message
	case r.Return != nil:
		s.Detail = string(r.Return.Kind)
	}
	return s
}

// TestExecuteCall: a call reports its progress, then, for an observed
// tool, the start of each retry and each failed attempt the registry
// retries, and last exactly one returned report; an unobserved tool
// reports no attempts.
func TestExecuteCall(t *testing.T) {
	type noArgs struct{}
	// flaky fails its first failures attempts with an execution error,
	// or with a user error (never retried) when user is set.
	flaky := func(t *testing.T, failures int, user bool) toolsets.Tool {
		t.Helper()
		tool, err := toolsets.NewContextFunc("flaky", func(_ context.Context, tc *toolsets.ToolContext, _ noArgs) (string, error) {
			if err := tc.Emit("working", nil); err != nil {
				return "", err
			}
			switch {
			case tc.Attempt > failures:
				return "done", nil
			case user:
				return "", toolsets.NewUserError("no database", nil)
			}
			return "", errors.New("connection reset")
		}, toolsets.WithMaxRetries(2))
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	tests := []struct {
		name     string
		tool     func(t *testing.T) toolsets.Tool
		observed bool
		want     []report
	}{
		{"success at once", func(t *testing.T) toolsets.Tool { return flaky(t, 0, false) }, true, []report{
			{ReportProgress, 1, "working"}, {ReportReturned, 1, "success"}}},
		{"retried twice", func(t *testing.T) toolsets.Tool { return flaky(t, 2, false) }, true, []report{
			{ReportProgress, 1, "working"}, {ReportRetried, 1, "connection reset"},
			{ReportStarted, 2, ""}, {ReportProgress, 2, "working"}, {ReportRetried, 2, "connection reset"},
			{ReportStarted, 3, ""}, {ReportProgress, 3, "working"}, {ReportReturned, 3, "success"}}},
		{"retries exhausted", func(t *testing.T) toolsets.Tool { return flaky(t, 5, false) }, true, []report{
			{ReportProgress, 1, "working"}, {ReportRetried, 1, "connection reset"},
			{ReportStarted, 2, ""}, {ReportProgress, 2, "working"}, {ReportRetried, 2, "connection reset"},
			{ReportStarted, 3, ""}, {ReportProgress, 3, "working"}, {ReportReturned, 3, "execution"}}},
		{"user error, not retried", func(t *testing.T) toolsets.Tool { return flaky(t, 1, true) }, true, []report{
			{ReportProgress, 1, "working"}, {ReportReturned, 1, "user_error"}}},
		{"not observed", func(t *testing.T) toolsets.Tool { return flaky(t, 2, false) }, false, []report{
			{ReportProgress, 1, "working"}, {ReportProgress, 2, "working"}, {ReportProgress, 3, "working"},
			{ReportReturned, 3, "success"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool := tc.tool(t)
			if tc.observed {
				tool = ObservedTool(tool)
			}
			reg := toolsets.NewRegistry()
			if err := reg.Register(tool); err != nil {
				t.Fatal(err)
			}
			var got []report
			req := ToolRequest{SessionID: "s", RunID: "r", CallID: "c1", Name: "flaky", Arguments: json.RawMessage(`{}`)}
			ExecuteCall(t.Context(), reg, req, nil, func(r ToolReport) { got = append(got, summarize(r)) })
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("reports (-want +got):\n%s", d)
			}
		})
	}
}
