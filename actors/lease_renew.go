package actors

import (
	"context"
	"log/slog"
	"time"
)

// leaseRenewer is the part of Leases a renewal pass uses.
type leaseRenewer interface {
	TTL() time.Duration
	Held() []string
	Renew(ctx context.Context, session string) (bool, error)
}

// renewTimeout bounds one lease renewal: until the next renewal tick (a
// third of the TTL), and never more than leaseTimeout. A renewal whose
// answer is lost — its request was in flight on a connection that broke
// with its server, and the client does not fail a request when it
// reconnects — is given up in time for the next one, sent on the
// reconnected connection, to renew the lease before it expires. Waiting
// leaseTimeout instead held up every other renewal of the pass for longer
// than a short TTL, and so let every lease of the node expire over one
// lost answer. A write that reached the server renews the lease even if its
// answer comes too late: giving up early loses nothing.
func renewTimeout(ttl time.Duration) time.Duration { return min(leaseTimeout, ttl/3) }

// renewHeld renews, one after the other, every lease l holds, each bounded
// by renewTimeout, and calls lost for each session whose lease another
// node holds now. A renewal that fails is logged and left to the next
// pass. It returns false, at once, when life ends (the host's close stops
// the renewals, see stopOwnership: the leases are released or left to
// expire).
func renewHeld(life context.Context, l leaseRenewer, log *slog.Logger, lost func(session string)) bool {
	for _, id := range l.Held() {
		// Bound by life: Close does not wait out a renewal in flight on a
		// connection that cannot answer.
		ctx, cancel := context.WithTimeout(life, renewTimeout(l.TTL()))
		ok, err := l.Renew(ctx, id)
		cancel()
		switch {
		case life.Err() != nil:
			return false
		case err != nil:
			log.Warn("renew lease", "session", id, "err", err)
		case !ok:
			log.Warn("lease lost", "session", id)
			lost(id)
		}
	}
	return true
}
