package weft

import (
	"context"

	"github.com/weft-run/weft/actors"
)

// Observer sees a runtime's work for telemetry (package telemetry is the
// implementation; Config.Observer). Besides what the host reports
// (actors.Observer: appends, remote deliveries, takeovers), it sees each
// run about to start on the caller's side and may add to its metadata,
// after the agent's run-start hooks, what must travel with the run (the
// caller's trace context): it sets keys the metadata does not have yet.
type Observer interface {
	actors.Observer
	RunStarting(ctx context.Context, metadata map[string]any)
}

// hostObserver is o as the host's port: nil stays an untyped nil, so that
// the host's nil checks hold.
func hostObserver(o Observer) actors.Observer {
	if o == nil {
		return nil
	}
	return o
}
