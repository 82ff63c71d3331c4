package events_test

import (
	"bytes"
	"testing"

	"github.com/weft-run/weft/events"
)

func TestNewIDIsV7AndIncreasing(t *testing.T) {
	prev := events.NewID()
	for range 10000 {
		id := events.NewID()
		if v := id.Version(); v != 7 {
			t.Fatalf("version %d, want 7: %s", v, id)
		}
		if id.Variant().String() != "RFC4122" {
			t.Fatalf("variant %v: %s", id.Variant(), id)
		}
		if bytes.Compare(prev[:8], id[:8]) >= 0 {
			t.Fatalf("%s does not come after %s", id, prev)
		}
		prev = id
	}
}

func TestNewIDAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes allocations of its own")
	}
	if n := testing.AllocsPerRun(100, func() { _ = events.NewID() }); n != 0 {
		t.Fatalf("NewID allocates %v times, want 0", n)
	}
}
