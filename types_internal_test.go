package weft

import (
	"testing"

	"github.com/weft-run/weft/actors"
)

// TestFacadeValuesMatchTheRuntime: the facade's own statuses, pending
// kinds and decision actions have the runtime's values, so conversions
// between them keep their meaning.
func TestFacadeValuesMatchTheRuntime(t *testing.T) {
	tests := []struct {
		name          string
		facade, inner string
	}{
		{"running", string(StatusRunning), string(actors.StatusRunning)},
		{"waiting", string(StatusWaiting), string(actors.StatusWaiting)},
		{"completed", string(StatusCompleted), string(actors.StatusCompleted)},
		{"failed", string(StatusFailed), string(actors.StatusFailed)},
		{"cancelled", string(StatusCancelled), string(actors.StatusCancelled)},
		{"approval", string(PendingApproval), string(actors.PendingApproval)},
		{"deferred", string(PendingDeferred), string(actors.PendingDeferred)},
		{"approve", string(ActionApprove), actors.ActionApprove},
		{"deny", string(ActionDeny), actors.ActionDeny},
		{"complete", string(ActionComplete), actors.ActionComplete},
		{"fail", string(ActionFail), actors.ActionFail},
	}
	for _, tt := range tests {
		if tt.facade != tt.inner {
			t.Errorf("%s: the facade's %q, the runtime's %q", tt.name, tt.facade, tt.inner)
		}
	}
	for _, st := range []actors.RunStatus{actors.StatusRunning, actors.StatusWaiting, actors.StatusCompleted, actors.StatusFailed, actors.StatusCancelled} {
		if s := Status(st); s.Settled() != st.Settled() || s.Ended() != st.Ended() {
			t.Errorf("%s: Settled %v Ended %v, the runtime's %v %v", st, s.Settled(), s.Ended(), st.Settled(), st.Ended())
		}
	}
}
