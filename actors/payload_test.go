package actors

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets"
)

// returnOf is a returned report of a success whose content is a string of
// n bytes.
func returnedOf(n int) ToolReport {
	content, _ := json.Marshal(strings.Repeat("r", n))
	ret := toolsets.Return{CallID: "c1", ToolName: "big", Kind: toolsets.KindSuccess, Success: true, Content: content, Attempts: 1}
	return ToolReport{Type: ReportReturned, CallID: "c1", Tool: "big", Attempt: 1, Return: &ret}
}

// TestLimitedReturnedEvent: the session records a return over its limit as
// the execution error TooLargeReturn, and one under it as it is.
func TestLimitedReturnedEvent(t *testing.T) {
	ret := *returnedOf(1000).Return
	over := limitedReturnedEvent("s", "r", ret, 500)
	got := over.extra.(toolsets.Return)
	if got.Kind != toolsets.KindExecution || !strings.Contains(got.Control.Message, `tool "big": result of `) || !strings.Contains(got.Control.Message, "exceeds the limit of 500 bytes") {
		t.Errorf("over the limit: %+v", got)
	}
	if len(over.Data) > 1000 {
		t.Errorf("the recorded event holds %d bytes", len(over.Data))
	}
	under := limitedReturnedEvent("s", "r", ret, 1<<20)
	if d := cmp.Diff(ret, under.extra.(toolsets.Return)); d != "" {
		t.Errorf("under the limit (-want +got):\n%s", d)
	}
}
