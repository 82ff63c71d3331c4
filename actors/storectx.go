package actors

import (
	"context"
	"time"
)

// storeTimeout bounds one append or read of the session actor.
const storeTimeout = 30 * time.Second

// storeCtx is the context a session actor bounds its store calls with:
// one deadline shared by the calls of storeTimeout/2 (a fresh one once
// less than half of it is left), so each call still has between
// storeTimeout/2 and storeTimeout, and an append costs no timer of its own.
// Its contexts derive from parent, the host's store lifetime (see
// Host.stopSessions), so that the host's close can end the calls of a
// store that cannot answer.
type storeCtx struct {
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelFunc
	deadline time.Time
}

// get returns a context with at least storeTimeout/2 left, or ended with
// its parent.
func (s *storeCtx) get() context.Context {
	if s.ctx == nil || time.Until(s.deadline) < storeTimeout/2 {
		s.release()
		s.deadline = time.Now().Add(storeTimeout)
		s.ctx, s.cancel = context.WithDeadline(s.parent, s.deadline)
	}
	return s.ctx
}

// release ends the current context (the actor stops).
func (s *storeCtx) release() {
	if s.cancel != nil {
		s.cancel()
		s.ctx, s.cancel = nil, nil
	}
}
