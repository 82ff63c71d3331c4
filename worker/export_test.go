package worker

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// EarlyCancels returns how many cancels the worker remembers for calls
// that have not reached it.
func (w *Worker) EarlyCancels() int {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	return len(w.cancelled)
}

// TakePooled takes msg as a call pulled from the worker's pool, as a slot
// of a pooled worker does (it returns once the call was served or left).
func (w *Worker) TakePooled(ctx context.Context, msg jetstream.Msg) { w.takePooled(ctx, msg) }
