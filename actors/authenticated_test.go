package actors

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft/events/memstore"
)

// A client's resume on the command subjects cannot claim that its
// decision's by is an authenticated principal: only a node's own API sets
// the flag (in-process, or forwarded on the node subjects). The same
// resume without the flag reaches the session.
func TestClientCannotClaimAuthenticated(t *testing.T) {
	tests := []struct {
		name          string
		authenticated bool
		wantBad       bool
	}{
		{name: "claims authenticated", authenticated: true, wantBad: true},
		{name: "free text by", authenticated: false, wantBad: false},
	}
	conn := testNATS(t)
	newTestHost(t, HostConfig{Conn: conn(), Store: memstore.New()})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, _ := json.Marshal(ResumeCommand{RunID: "r1", Decisions: []Decision{{ID: "c1", Action: ActionApprove, By: "mallory", Authenticated: tc.authenticated}}})
			ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
			defer cancel()
			got, err := commandRequest(ctx, conn(), "s-auth", VerbResume, body)
			if err != nil {
				t.Fatal(err)
			}
			if got.Error == nil {
				t.Fatalf("resume of an unknown run answered %+v, want an error", got)
			}
			bad := errors.Is(got.Error, ErrBadCommand) && strings.Contains(got.Error.Error(), "authenticated")
			if bad != tc.wantBad {
				t.Fatalf("reply error %v: refused as a claim of authentication = %v, want %v", got.Error, bad, tc.wantBad)
			}
		})
	}
}
