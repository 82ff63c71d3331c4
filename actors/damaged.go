package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-run/weft/events"
)

// DamagedSession is one damaged session and why.
type DamagedSession struct {
	ID string
	// Err is the poison (it wraps an *events.PoisonError) or the fold's
	// refusal.
	Err error
}

// DamagedError is returned by Recover, next to the ids of the sessions it
// did carry on, when some sessions are damaged: it carries on every other
// session and reports these. It matches ErrSessionDamaged.
type DamagedError struct {
	Sessions []DamagedSession
}

func (e *DamagedError) Error() string {
	parts := make([]string, len(e.Sessions))
	for i, s := range e.Sessions {
		parts[i] = fmt.Sprintf("session %q: %v", s.ID, s.Err)
	}
	return fmt.Sprintf("recover: %d damaged session(s), not carried on: %s", len(e.Sessions), strings.Join(parts, "; "))
}

func (e *DamagedError) Is(target error) bool { return target == ErrSessionDamaged }

// checkSession reads and folds session id's stream as the session actor
// would, decoding every event strictly. It returns the damage (poison, a
// refused fold) as damage, and a failure to read the store as err.
func (h *Host) checkSession(ctx context.Context, id string) (damage, err error) {
	evs, err := h.cfg.Store.ReadStream(ctx, events.SessionStream(id), 0)
	switch {
	case errors.Is(err, events.ErrPoison):
		return err, nil
	case err != nil:
		return nil, err
	}
	st := NewSessionState(id)
	for _, ev := range evs {
		if perr := events.CheckStored(ev); perr != nil {
			return perr, nil
		}
		if ferr := st.Apply(ev); ferr != nil {
			return events.Poison(ev, ferr), nil
		}
	}
	return nil, nil
}
