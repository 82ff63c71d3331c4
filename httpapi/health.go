package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/weft-run/weft/events"
)

// healthz answers 200 while the process serves.
func (a *API) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyTimeout bounds the store probe of readyz.
const readyTimeout = 2 * time.Second

// readyProbeStream is the stream readyz reads: any read the store answers
// (a stream with no events included) shows it reachable.
const readyProbeStream = "weft-readyz-probe"

// readyz answers 200 when the bus is connected, the store answers and
// agents are loaded, 503 otherwise; the body says which check failed.
func (a *API) readyz(w http.ResponseWriter, r *http.Request) {
	checks := map[string]string{"bus": "ok", "store": "ok", "agents": fmt.Sprintf("%d loaded", len(a.agents.Load().names))}
	ready := true
	if c := a.rt.Conn(); c == nil || !c.IsConnected() {
		checks["bus"], ready = "not connected", false
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if _, err := a.rt.Store().ReadStream(ctx, readyProbeStream, 0); err != nil && !errors.Is(err, events.ErrStreamNotFound) {
		checks["store"], ready = "unreachable: "+err.Error(), false
	}
	if len(a.agents.Load().names) == 0 {
		checks["agents"], ready = "none loaded", false
	}
	status, code := http.StatusOK, "ready"
	if !ready {
		status, code = http.StatusServiceUnavailable, "not_ready"
	}
	writeJSON(w, status, map[string]any{"status": code, "checks": checks})
}
