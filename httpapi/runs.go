package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/protocol"
)

// startRequest is the body of a start.
type startRequest struct {
	// Agent names the agent; it may be left out when the API has one.
	Agent  string `json:"agent"`
	Prompt string `json:"prompt"`
	// SessionID names the session on POST /v1/runs (new or existing);
	// empty starts a new one.
	SessionID string         `json:"session_id"`
	Metadata  map[string]any `json:"metadata"`
}

// runRef is the answer to a start, a cancel and a decision.
type runRef struct {
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
}

// IdempotencyKeyHeader makes a retried start return the run the first one
// started.
const IdempotencyKeyHeader = "Idempotency-Key"

// maxKeyLen bounds an Idempotency-Key.
const maxKeyLen = 255

// idempotencyNS is the UUIDv5 namespace of the ids derived from
// Idempotency-Keys.
var idempotencyNS = uuid.MustParse("4f2a3c9e-1b7d-5e8a-9c0f-6d2b1a7e3c55")

// KeyedSessionID is the id of the new session a start of principal with
// Idempotency-Key key (and no session) runs in: a client that knows it
// can follow the session's events before it starts the run (weft run).
func KeyedSessionID(principal, key string) string { return keyedID(principal, key) }

// keyedID derives an id from the principal, a key and the parts that
// scope it: the same principal retrying with the same key gets the same
// id, another principal's key never collides with it.
func keyedID(principal, key string, scope ...string) string {
	name := strings.Join(append([]string{principal, key}, scope...), "\x00")
	return uuid.NewSHA1(idempotencyNS, []byte(name)).String()
}

// startRun starts a run in the session of the path, or of the body's
// session_id, or a new one. With an Idempotency-Key the session (when new)
// and the run ids derive from the key, so that a retry starts nothing new
// and answers the same ids; a retry with another prompt or agent is
// refused (409 idempotency_conflict).
func (a *API) startRun(w http.ResponseWriter, r *http.Request) {
	var req startRequest
	if !readJSON(w, r, &req) {
		return
	}
	sessionID := r.PathValue("session")
	if sessionID != "" && req.SessionID != "" && req.SessionID != sessionID {
		writeError(w, http.StatusBadRequest, "bad_request", "session_id in the body differs from the path's")
		return
	}
	if sessionID == "" {
		sessionID = req.SessionID
	}
	if req.Prompt == "" {
		writeError(w, http.StatusBadRequest, "bad_request", "a start needs a prompt")
		return
	}
	agent, ok := a.agentFor(w, req.Agent)
	if !ok {
		return
	}
	key := r.Header.Get(IdempotencyKeyHeader)
	if len(key) > maxKeyLen || strings.ContainsFunc(key, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("the %s must be at most %d printable characters", IdempotencyKeyHeader, maxKeyLen))
		return
	}
	p := principalOf(r.Context())
	var opts []weft.RunOption
	if len(req.Metadata) > 0 {
		opts = append(opts, weft.WithMetadata(req.Metadata))
	}
	switch {
	case sessionID == "" && key != "":
		sessionID = keyedID(p.Name, key)
	case sessionID == "":
		sessionID = uuid.Must(uuid.NewV7()).String()
	}
	if err := events.ValidateStream(events.SessionStream(sessionID)); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("session id %q: %v", sessionID, err))
		return
	}
	if key != "" {
		opts = append(opts, weft.WithRunID(keyedID(p.Name, key, sessionID)))
	}
	sess := agent.Session(sessionID)
	runID, err := sess.Start(r.Context(), req.Prompt, opts...)
	if err != nil {
		if key != "" && errors.Is(err, protocol.ErrBadCommand) && a.hasRun(r.Context(), sess, keyedID(p.Name, key, sessionID)) {
			// The session refuses a start with the id of a run it has
			// when the agent or prompt differ.
			writeError(w, http.StatusConflict, "idempotency_conflict", fmt.Sprintf("the %s was used for a start with another agent or prompt", IdempotencyKeyHeader))
			return
		}
		writeRuntimeError(w, err)
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+sessionID+"/runs/"+runID)
	writeJSON(w, http.StatusAccepted, runRef{SessionID: sessionID, RunID: runID})
}

// hasRun reports whether session s has run runID.
func (a *API) hasRun(ctx context.Context, s *weft.Session, runID string) bool {
	st, err := s.Status(ctx)
	if err != nil {
		return false
	}
	_, ok := st.Run(runID)
	return ok
}

// agentFor returns the agent named name, or the only agent when name is
// empty; it answers the error itself.
func (a *API) agentFor(w http.ResponseWriter, name string) (*weft.Agent, bool) {
	set := a.agents.Load()
	if name == "" {
		if len(set.names) != 1 {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("name the agent: this node has %d (GET /v1/agents)", len(set.names)))
			return nil, false
		}
		name = set.names[0]
	}
	ag, ok := set.byName[name]
	if !ok {
		writeError(w, http.StatusNotFound, "unknown_agent", fmt.Sprintf("agent %q is not served here", name))
		return nil, false
	}
	return ag, true
}

// session returns session id through any agent (a session's commands and
// reads do not depend on the agent the handle was made with).
func (a *API) session(w http.ResponseWriter, id string) (*weft.Session, bool) {
	set := a.agents.Load()
	if len(set.names) == 0 {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "no agents are loaded")
		return nil, false
	}
	if err := events.ValidateStream(events.SessionStream(id)); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("session id %q: %v", id, err))
		return nil, false
	}
	return set.byName[set.names[0]].Session(id), true
}

// runView is a run as GET .../runs/{run} shows it.
type runView struct {
	SessionID string             `json:"session_id"`
	RunID     string             `json:"run_id"`
	Agent     string             `json:"agent"`
	Status    weft.Status        `json:"status"`
	Output    string             `json:"output,omitempty"`
	Usage     events.Usage       `json:"usage"`
	Pending   []weft.PendingItem `json:"pending,omitempty"`
	Error     *events.ErrorInfo  `json:"error,omitempty"`
	Version   uint64             `json:"session_version"`
}

// maxWait bounds the wait of GET .../runs/{run}?wait=.
const maxWait = 5 * time.Minute

// getRun returns a run; with wait=DURATION (at most 5m) it first waits
// until the run has settled (waiting, completed, failed or cancelled), or
// the duration ends (the run is then shown as it stands).
func (a *API) getRun(w http.ResponseWriter, r *http.Request) {
	s, ok := a.session(w, r.PathValue("session"))
	if !ok {
		return
	}
	runID := r.PathValue("run")
	if q := r.URL.Query().Get("wait"); q != "" {
		d, err := time.ParseDuration(q)
		if err != nil || d < 0 || d > maxWait {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("wait must be a duration up to %v, such as 30s", maxWait))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		_, err = s.Wait(ctx, runID)
		cancel()
		var re *weft.RunError
		if err != nil && !errors.As(err, &re) && ctx.Err() == nil {
			writeRuntimeError(w, err)
			return
		}
	}
	st, err := s.Status(r.Context())
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	run, ok := st.Run(runID)
	if !ok {
		writeError(w, http.StatusNotFound, "unknown_run", fmt.Sprintf("session %q has no run %q", s.ID(), runID))
		return
	}
	v := runView{SessionID: s.ID(), RunID: run.ID, Agent: run.Agent, Status: run.Status, Output: run.Output, Usage: run.Usage, Version: st.Version}
	v.Pending = append(append(append(v.Pending, run.Pending.Approvals...), run.Pending.Deferred...), run.Pending.Elicitations...)
	if run.Err != nil {
		v.Error = &events.ErrorInfo{Kind: run.Err.Kind, Message: run.Err.Message}
	}
	writeJSON(w, http.StatusOK, v)
}

// cancelRequest is the body of a cancel.
type cancelRequest struct {
	Reason string `json:"reason"`
}

// cancelRun cancels a run; the cancel records the principal as its by.
func (a *API) cancelRun(w http.ResponseWriter, r *http.Request) {
	var req cancelRequest
	if !readJSON(w, r, &req) {
		return
	}
	s, ok := a.session(w, r.PathValue("session"))
	if !ok {
		return
	}
	runID := r.PathValue("run")
	if err := s.Cancel(r.Context(), runID, principalOf(r.Context()).Name, req.Reason); err != nil {
		writeRuntimeError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, runRef{SessionID: s.ID(), RunID: runID})
}
