package actors

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/events"
)

// Observer sees what a host does, for telemetry (package telemetry is
// the implementation). It is a port: HostConfig.Observer nil (the
// default) costs one nil check at each call site and nothing else.
//
// Its methods are called on the goroutines of the session and scheduler
// actors: they must not block (no I/O but a one-off read of a session's
// stream a process has not seen before) and must not keep the slices or
// headers they are given past the call.
type Observer interface {
	// Appended sees events a session appended, as stored (versions and
	// positions set), after the append; took is how long the append took.
	Appended(stored []events.Event, took time.Duration)
	// Delivering sees a delivery of a remote tool call (delivery 1, then
	// 2, 3, … for redeliveries) before it is published, and may add
	// headers to it (a trace context).
	Delivering(call ToolRequest, delivery int, h nats.Header)
	// TookOver sees a session this host took over from a node whose lease
	// lapsed.
	TookOver(sessionID string)
	// ToolContext returns the context a local tool call executes with:
	// ctx, carrying the call's trace context (an MCP toolset passes it
	// on).
	ToolContext(ctx context.Context, call ToolRequest) context.Context
}

// observe gives the host's Observer, if any, the events of recs, as
// stored.
func (a *sessionActor) observe(recs []record, took time.Duration) {
	o := a.h.cfg.Observer
	if o == nil {
		return
	}
	evs := make([]events.Event, len(recs))
	for i := range recs {
		evs[i] = recs[i].Event
	}
	o.Appended(evs, took)
}
