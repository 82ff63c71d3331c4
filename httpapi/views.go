package httpapi

import (
	"context"
	"fmt"
	"sync"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// views are the projections the read operations answer from: the session
// archive and the HITL queue, folded from the whole log. They catch up
// with the log on each read (from where the last read left them), so a
// read sees every event appended before it began.
type views struct {
	mu      sync.Mutex
	runner  *projections.Runner
	archive *projections.Archive
	queue   *projections.Queue
}

func newViews(log events.Store) *views {
	v := &views{archive: projections.NewArchive(), queue: projections.NewQueue()}
	v.runner = projections.NewRunner(log, []projections.Projection{v.archive, v.queue})
	return v
}

// read catches the views up with the log and calls fn with them, holding
// them for fn's duration. It returns the log position the views reached.
func (v *views) read(ctx context.Context, fn func(a *projections.Archive, q *projections.Queue) error) (uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, err := v.runner.CatchUp(ctx); err != nil {
		return 0, fmt.Errorf("read the log: %w", err)
	}
	pos := v.runner.Checkpoint()
	if fn == nil {
		return pos, nil
	}
	return pos, fn(v.archive, v.queue)
}
