package weft_test

import (
	"errors"
	"testing"

	"github.com/weft-run/weft"
)

// TestWatchTakeoversWithoutLeases: on the embedded server the error
// matches weft.ErrNoLeases, no actors import needed.
func TestWatchTakeoversWithoutLeases(t *testing.T) {
	rt := newRuntime(t)
	if err := rt.WatchTakeovers(t.Context(), nil); !errors.Is(err, weft.ErrNoLeases) {
		t.Errorf("WatchTakeovers = %v, want ErrNoLeases", err)
	}
}
