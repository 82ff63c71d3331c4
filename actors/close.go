package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// closeGrace is how long Close lets the store calls the session actors
// have in flight run before it ends them (see stopSessions): a store that
// answers does so well within it.
const closeGrace = 2 * time.Second

// stopSessions stops the session actors pids, for Close, and waits for
// them: all together, under one deadline (the 10 s of protoactor's
// PoisonFuture, which runs from when the future is made), not one after
// another. An actor takes its poison once the message it is handling is
// done, and one in a store call the store cannot answer (its connection
// down, its server gone) would hold it for up to storeTimeout. So once
// closeGrace has passed, stopSessions ends the host's store lifetime
// (storeLife, which every actor's store context derives from): the calls
// in flight return with context.Canceled and those after fail at once.
//
// On a store that answers, an append ended in flight has an outcome this
// process does not learn: it may or may not be stored. That is the case
// of a crash, and the log stays consistent as after one: the session's
// next owner learns the outcome by reading its stream, and appends are
// fenced by their expected version and idempotent by event id, so no
// append made here or later can fork or double the stream. Waiting the
// grace first leaves a healthy close's appends to finish.
func (h *Host) stopSessions(pids []*actor.PID) {
	defer h.endStore()
	stopped := make([]*actor.Future, len(pids))
	for i, p := range pids {
		stopped[i] = h.system.Root.PoisonFuture(p)
	}
	grace := time.AfterFunc(closeGrace, h.endStore)
	defer grace.Stop()
	for i, f := range stopped {
		// Each ends by the deadline they share.
		if err := f.Wait(); err != nil {
			h.log.Warn("session actor did not stop", "pid", pids[i].Id, "err", err)
		}
	}
}
