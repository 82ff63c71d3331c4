package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/weft-run/weft/events"
)

// decision is the answer the script gets for a decision: ok, or the
// message to show next to the item (a schema refusal, or who decided it
// already and when).
type decision struct {
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
	// Decided is set when the item was decided elsewhere.
	Decided string `json:"decided,omitempty"`
	// Staged is set when the decision is kept until the run's other
	// items are decided (a run resumes with all its decisions at once).
	Staged string `json:"staged,omitempty"`
}

var actions = map[string]bool{"approve": true, "deny": true, "complete": true, "fail": true, "answer": true}

// decide sends one decision through the API with the caller's token: the
// form's fields become the API's body (arguments, reason, result,
// details, answer, content; the JSON ones must parse).
func (c *Console) decide(w http.ResponseWriter, r *http.Request) {
	session, call, action := r.PathValue("session"), r.PathValue("call"), r.PathValue("action")
	if !actions[action] {
		writeJSON(w, http.StatusNotFound, decision{Message: fmt.Sprintf("no action %q", action)})
		return
	}
	body := map[string]any{}
	for _, f := range []string{"reason", "answer"} {
		if v := strings.TrimSpace(r.PostFormValue(f)); v != "" {
			body[f] = v
		}
	}
	for _, f := range []string{"arguments", "result", "details", "content"} {
		v := strings.TrimSpace(r.PostFormValue(f))
		if v == "" {
			continue
		}
		if !json.Valid([]byte(v)) {
			writeJSON(w, http.StatusBadRequest, decision{Message: f + " is not JSON"})
			return
		}
		body[f] = json.RawMessage(v)
	}
	if action == "complete" && body["result"] == nil {
		writeJSON(w, http.StatusBadRequest, decision{Message: "complete needs a result (JSON)"})
		return
	}
	cl := callerOf(r.Context())
	ids, run, err := c.siblings(r.Context(), cl.token, session, call)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	batch := len(ids) > 1
	var k stageKey
	if batch {
		// The run waits for several items: its decisions go together.
		k = stageKey{cl.p.Name, session, run}
		all, missing := c.staged.stage(k, call, action, body, ids)
		if len(missing) > 0 {
			writeJSON(w, http.StatusOK, decision{Staged: stagedMessage(missing)})
			return
		}
		err = c.call(r.Context(), cl.token, "POST", "/v1/sessions/"+url.PathEscape(session)+"/decisions", nil, map[string]any{"decisions": all}, nil)
	} else {
		err = c.call(r.Context(), cl.token, "POST",
			"/v1/sessions/"+url.PathEscape(session)+"/pending/"+url.PathEscape(call)+"/"+action, nil, body, nil)
	}
	ae, isAPI := errors.AsType[*apiError](err)
	if batch {
		switch {
		case err == nil || isAPI && decidedElsewhere(ae.Code):
			c.staged.drop(k)
		case isAPI:
			// Kept: deciding the refused item anew sends them again. The
			// answer below names the refused item.
			ae.Message = refusedMessage(ae.Message, ids)
		}
	}
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, decision{OK: true})
	case isAPI && decidedElsewhere(ae.Code):
		who, werr := c.decidedBy(r, session, call)
		if werr != nil {
			c.fail(w, r, werr)
			return
		}
		if who == "" {
			writeJSON(w, ae.Status, decision{Message: ae.Message})
			return
		}
		writeJSON(w, http.StatusOK, decision{Decided: who})
	case isAPI:
		writeJSON(w, ae.Status, decision{Message: ae.Message})
	default:
		c.fail(w, r, err)
	}
}

// decidedElsewhere: the API's error code says the item or its run no
// longer waits for this decision.
func decidedElsewhere(code string) bool {
	return code == "already_decided" || code == "not_waiting" || code == "unknown_decision" || code == "run_ended"
}

// decisionOf says who decided a call that left the queue, and when
// (the script asks when an item disappears).
func (c *Console) decisionOf(w http.ResponseWriter, r *http.Request) {
	session := r.PathValue("session")
	if err := c.call(r.Context(), callerOf(r.Context()).token, "GET", "/v1/sessions/"+url.PathEscape(session), nil, nil, nil); err != nil {
		c.fail(w, r, err)
		return
	}
	who, err := c.decidedBy(r, session, r.PathValue("call"))
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, decision{Decided: who})
}

// decidedBy says who decided call in session and when, from the log: ""
// when no decision of it is recorded.
func (c *Console) decidedBy(r *http.Request, session, call string) (string, error) {
	evs, err := c.store.ReadStream(r.Context(), events.SessionStream(session), 0)
	if err != nil {
		return "", fmt.Errorf("read session %q: %w", session, err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.ToolCallID != call || ev.Type != events.TypeApprovalDecided && ev.Type != events.TypeDeferredResolved && ev.Type != events.TypeElicitationAnswered {
			continue // only decisions are decoded
		}
		v, err := events.Decode(ev)
		if err != nil {
			return "", fmt.Errorf("decision of %q in session %q: %w", call, session, err)
		}
		var verb, by string
		switch d := v.(type) {
		case events.ApprovalDecided:
			verb, by = decisionVerb(d), d.By
		case events.DeferredResolved:
			verb, by = "resolved", d.By
		case events.ElicitationAnswered:
			verb, by = "answered", d.By
		}
		return fmt.Sprintf("already %s by %s at %s", verb, by, ev.Time.UTC().Format(time.RFC3339)), nil
	}
	return "", nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
