package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-run/weft"
)

// Config configures the API.
type Config struct {
	// Agents are the agents runs may be started with, by name (the first
	// is the default when a start names none and it is the only one).
	Agents []*weft.Agent
	// Tokens authenticate the callers. Nil or empty: no authentication,
	// every caller is LocalPrincipal with every role, and Listen accepts
	// loopback addresses only.
	Tokens *Tokens
	// CORSOrigins are the origins a browser may call the API from
	// ("*": any); empty (the default) sends no CORS headers.
	CORSOrigins []string
	// Logger receives one line per request (method, path, status,
	// principal; never a token) and diagnostics; nil discards them.
	Logger *slog.Logger
	// KeepAlive is how often an idle event stream sends an SSE comment;
	// zero means DefaultKeepAlive.
	KeepAlive time.Duration
	// Reload reloads the node's agents for POST /v1/agents/reload (nil:
	// the node has nothing to reload, 501). It returns what changed, as
	// the answer's JSON; it gives the API the agents it serves from then
	// on itself (API.SetAgents). An error wrapping ErrReloadFailed (a
	// spec file that does not load or register, which then changed
	// nothing) is answered 422 reload_failed with its text.
	Reload func(ctx context.Context) (changes any, err error)
}

// DefaultKeepAlive is the default SSE keep-alive interval.
const DefaultKeepAlive = 15 * time.Second

// ErrNoRuntime: New without a runtime.
var ErrNoRuntime = errors.New("httpapi: no runtime")

// API is the HTTP API of a weft node, an http.Handler.
type API struct {
	rt        *weft.Runtime
	agents    atomic.Pointer[agentSet]
	reload    func(ctx context.Context) (any, error)
	tokens    *Tokens
	cors      []string
	log       *slog.Logger
	keepAlive time.Duration
	mux       *http.ServeMux
	views     *views
	fanout    *fanout
	// liveBuffer is each event stream's buffer of live messages.
	liveBuffer int
	// done is closed by Close: the event streams end.
	done      chan struct{}
	closeOnce sync.Once
}

// Close ends the event streams (an http.Server's Shutdown waits for
// them otherwise: register it with RegisterOnShutdown). The other
// operations go on serving.
func (a *API) Close() {
	a.closeOnce.Do(func() { close(a.done) })
}

// New returns the API of rt serving cfg.Agents.
func New(rt *weft.Runtime, cfg Config) (*API, error) {
	if rt == nil {
		return nil, ErrNoRuntime
	}
	a := &API{rt: rt, reload: cfg.Reload, tokens: cfg.Tokens, cors: slices.Clone(cfg.CORSOrigins),
		log: cfg.Logger, keepAlive: cfg.KeepAlive, mux: http.NewServeMux(), views: newViews(rt.Store()), fanout: newFanout(rt.Conn()), liveBuffer: liveBuffer, done: make(chan struct{})}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.keepAlive <= 0 {
		a.keepAlive = DefaultKeepAlive
	}
	if err := a.SetAgents(cfg.Agents); err != nil {
		return nil, err
	}
	for _, rt := range a.routes() {
		h := http.Handler(rt.handler)
		if rt.role != "" {
			h = a.authenticate(require(rt.role, rt.handler))
		}
		a.mux.Handle(rt.method+" "+rt.pattern, h)
	}
	return a, nil
}

// route is one operation of the API; the OpenAPI document lists the same.
type route struct {
	method, pattern string
	// role is what the caller needs; "" for the public probes and
	// document.
	role    Role
	handler http.HandlerFunc
}

// routes returns the API's operations.
func (a *API) routes() []route {
	return []route{
		{"GET", "/healthz", "", a.healthz},
		{"GET", "/readyz", "", a.readyz},
		{"GET", "/v1/openapi.yaml", "", serveOpenAPI},
		{"GET", "/v1/whoami", RoleViewer, a.whoami},
		{"GET", "/v1/agents", RoleViewer, a.listAgents},
		{"POST", "/v1/agents/reload", RoleOperator, a.reloadAgents},
		{"POST", "/v1/runs", RoleOperator, a.startRun},
		{"GET", "/v1/sessions", RoleViewer, a.listSessions},
		{"GET", "/v1/sessions/{session}", RoleViewer, a.getSession},
		{"POST", "/v1/sessions/{session}/runs", RoleOperator, a.startRun},
		{"GET", "/v1/sessions/{session}/runs/{run}", RoleViewer, a.getRun},
		{"POST", "/v1/sessions/{session}/runs/{run}/cancel", RoleOperator, a.cancelRun},
		{"GET", "/v1/sessions/{session}/events", RoleViewer, a.sessionEvents},
		{"GET", "/v1/events", RoleViewer, a.allEvents},
		{"GET", "/v1/pending", RoleViewer, a.listPending},
		{"POST", "/v1/sessions/{session}/decisions", RoleApprover, a.decide},
		{"POST", "/v1/sessions/{session}/pending/{call}/approve", RoleApprover, a.decideOne(weft.ActionApprove)},
		{"POST", "/v1/sessions/{session}/pending/{call}/deny", RoleApprover, a.decideOne(weft.ActionDeny)},
		{"POST", "/v1/sessions/{session}/pending/{call}/complete", RoleApprover, a.decideOne(weft.ActionComplete)},
		{"POST", "/v1/sessions/{session}/pending/{call}/fail", RoleApprover, a.decideOne(weft.ActionFail)},
		{"POST", "/v1/sessions/{session}/pending/{call}/answer", RoleApprover, a.decideOne(weft.ActionAnswer)},
	}
}

// ServeHTTP serves a request: CORS (when configured), then the route,
// then one log line.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	start := time.Now()
	if a.corsHandled(sw, r) {
		return
	}
	a.mux.ServeHTTP(sw, r)
	a.log.Info("http", "method", r.Method, "path", r.URL.Path, "status", sw.status, "principal", sw.principal,
		"remote", r.RemoteAddr, "ms", time.Since(start).Milliseconds())
}

// statusWriter remembers the status written; it passes Flush on for the
// event streams.
type statusWriter struct {
	http.ResponseWriter
	status    int
	principal string
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// apiError is the body of every error response.
type apiError struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError writes an error response.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, apiError{Error: errorBody{Code: code, Message: message}})
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"encode the response"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// maxBody bounds a request body.
const maxBody = 4 << 20

// readJSON decodes the request's JSON body into v (an empty body leaves v
// as it is); unknown fields are refused. It answers 400 itself and
// returns false on a bad body.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "bad_request", fmt.Sprintf("read the body: %v", err))
		return false
	}
	if len(b) == 0 {
		return true
	}
	dec := json.NewDecoder(bytesReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("the body is not the JSON this operation takes: %v", err))
		return false
	}
	return true
}

func (a *API) whoami(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	writeJSON(w, http.StatusOK, map[string]any{"principal": p.Name, "roles": p.Roles, "authenticated": p.Authenticated})
}

func (a *API) listAgents(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	set := a.agents.Load()
	for _, n := range set.names {
		ag := set.byName[n]
		v := map[string]any{"name": n, "toolset_ids": ag.ToolsetIDList()}
		if ag.Version() != "" {
			v["version"] = ag.Version()
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out})
}
