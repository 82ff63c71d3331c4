package projections_test

import (
	"errors"
	"testing"

	"github.com/weft-run/weft/projections"
)

func TestErrors(t *testing.T) {
	evs := loadHistory(t, histories[0])
	_, err := projections.NewRunner(newStore(t, evs[:1]), nil).CatchUp(t.Context())
	var pe *projections.Error
	if !errors.Is(err, projections.ErrNoProjections) || !errors.As(err, &pe) {
		t.Fatalf("CatchUp = %v, want a *projections.Error wrapping ErrNoProjections", err)
	}
	a := projections.NewArchive()
	if _, err := a.Session("nope"); !errors.Is(err, projections.ErrUnknownSession) {
		t.Errorf("Session = %v, want ErrUnknownSession", err)
	}
	if _, err := projections.NewAudit().Timeline("nope"); !errors.Is(err, projections.ErrUnknownSession) {
		t.Errorf("Timeline = %v, want ErrUnknownSession", err)
	}
}
