package projections_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

func TestErrors(t *testing.T) {
	evs := loadHistory(t, histories[0])
	bad := evs[0]
	bad.ID = uuid.New() // not a re-append of the first event
	bad.Data = json.RawMessage(`{"agent":7}`)
	tests := []struct {
		name  string
		evs   []events.Event
		projs bool
		want  error
	}{
		{name: "malformed data", evs: []events.Event{evs[0], bad}, projs: true, want: events.ErrMalformed},
		{name: "no projections", evs: evs[:1], projs: false, want: projections.ErrNoProjections},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ps []projections.Projection
			if tt.projs {
				ps = views(evs)
			}
			_, err := projections.NewRunner(newStore(t, tt.evs), ps).CatchUp(t.Context())
			var pe *projections.Error
			if !errors.Is(err, tt.want) || !errors.As(err, &pe) {
				t.Fatalf("CatchUp = %v, want a *projections.Error wrapping %v", err, tt.want)
			}
			for _, p := range ps {
				if p.Checkpoint() != 1 {
					t.Errorf("%s checkpoint = %d, want 1 (stopped before the bad event)", p.Name(), p.Checkpoint())
				}
			}
		})
	}
	a := projections.NewArchive()
	if _, err := a.Session("nope"); !errors.Is(err, projections.ErrUnknownSession) {
		t.Errorf("Session = %v, want ErrUnknownSession", err)
	}
	if _, err := projections.NewAudit().Timeline("nope"); !errors.Is(err, projections.ErrUnknownSession) {
		t.Errorf("Timeline = %v, want ErrUnknownSession", err)
	}
}
