package weft

import (
	"log/slog"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/events"
)

// runKey names a run: its session and its id.
type runKey struct{ session, run string }

// subrunScan folds, from the events of Recover's read of the whole log,
// what sub-run recovery acts on (see subruns.recoverScan): the runs that
// ended and the runs that are sub-runs, with their parents. Poison never
// reaches it (Recover shows only the events the store decoded); a run
// start whose data does not decode is logged and skipped.
type subrunScan struct {
	log      *slog.Logger
	ended    map[runKey]bool
	children map[runKey]actors.ParentRef
}

func newSubrunScan(log *slog.Logger) *subrunScan {
	return &subrunScan{log: log, ended: map[runKey]bool{}, children: map[runKey]actors.ParentRef{}}
}

// observe folds ev, one event of the log in log order.
func (sc *subrunScan) observe(ev events.Event) {
	switch ev.Type {
	case events.TypeRunStarted:
		d, err := events.DecodeAs[events.RunStarted](ev)
		if err != nil {
			sc.log.Warn("recover sub-runs: a run start does not decode", "session", ev.SessionID, "run", ev.RunID, "err", err)
			return
		}
		if d.ParentSessionID != "" {
			sc.children[runKey{ev.SessionID, ev.RunID}] = actors.ParentRef{SessionID: d.ParentSessionID, RunID: d.ParentRunID, ToolCallID: d.ParentToolCallID, Depth: d.Depth}
		}
	case events.TypeRunCompleted, events.TypeRunFailed, events.TypeRunCancelled:
		sc.ended[runKey{ev.SessionID, ev.RunID}] = true
	}
}
