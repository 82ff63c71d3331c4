package actors

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// stuckRenewer holds sessions whose renewals succeed at once, except those
// of stuck, which never get an answer (a request lost with its server):
// they block until their context ends.
type stuckRenewer struct {
	ttl   time.Duration
	held  []string
	stuck string

	mu      sync.Mutex
	renewed map[string]time.Time // when each session was last renewed
}

func (r *stuckRenewer) TTL() time.Duration { return r.ttl }
func (r *stuckRenewer) Held() []string     { return slices.Clone(r.held) }

func (r *stuckRenewer) Renew(ctx context.Context, session string) (bool, error) {
	if session == r.stuck {
		<-ctx.Done()
		return false, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renewed[session] = time.Now()
	return true, nil
}

// A renewal whose answer never comes is given up before it holds up the
// next ones past the lease TTL: the other leases of the pass are renewed
// well within the TTL, and the pass ends in time for the next tick to try
// the stuck one again before it expires.
func TestRenewHeldLostAnswerKeepsOtherLeases(t *testing.T) {
	const ttl = time.Second
	r := &stuckRenewer{ttl: ttl, held: []string{"lost", "kept"}, stuck: "lost", renewed: map[string]time.Time{}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	start := time.Now()
	if !renewHeld(t.Context(), r, log, func(id string) { t.Errorf("lease of %s reported lost", id) }) {
		t.Fatal("renewHeld reported the host closing")
	}
	took := time.Since(start)
	r.mu.Lock()
	kept, ok := r.renewed["kept"]
	r.mu.Unlock()
	if !ok {
		t.Fatal("the lease after the stuck one was not renewed")
	}
	if d := kept.Sub(start); d >= ttl/2 {
		t.Errorf("the lease after the stuck one was renewed %v into the pass, want within %v (TTL %v)", d, ttl/2, ttl)
	}
	if took >= 2*ttl/3 {
		t.Errorf("the pass took %v, want under %v: the stuck lease's next renewal would come after it expired", took, 2*ttl/3)
	}
}

// renewHeld stops at once when the host's life ends, even in a renewal
// that gets no answer.
func TestRenewHeldStopsWithLife(t *testing.T) {
	r := &stuckRenewer{ttl: time.Hour, held: []string{"lost", "kept"}, stuck: "lost", renewed: map[string]time.Time{}}
	life, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	if renewHeld(life, r, slog.New(slog.NewTextHandler(io.Discard, nil)), func(string) {}) {
		t.Fatal("renewHeld went on after the host's life ended")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("renewHeld took %v to stop", took)
	}
	if _, ok := r.renewed["kept"]; ok {
		t.Error("a lease was renewed after the host's life ended")
	}
}
