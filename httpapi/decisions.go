package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/toolsets"
)

// decisionRequest is one decision of POST .../decisions; the single-item
// operations take the same fields but id and action, which their path
// gives.
type decisionRequest struct {
	ID     string      `json:"id"`
	Action weft.Action `json:"action"`
	// By is free text, accepted only by an API without tokens; with
	// tokens the decision's by is the token's principal.
	By     string `json:"by"`
	Reason string `json:"reason"`
	// Arguments are an approval's reviewed arguments (a JSON object).
	Arguments json.RawMessage `json:"arguments"`
	// Result is a completed deferred call's value; Details a failed
	// one's structured details.
	Result  json.RawMessage `json:"result"`
	Details json.RawMessage `json:"details"`
	// Answer is an elicitation's answer: accept (with Content fitting the
	// requested schema), decline or cancel.
	Answer  string          `json:"answer"`
	Content json.RawMessage `json:"content"`
}

// decisionsRequest is the body of POST .../decisions.
type decisionsRequest struct {
	Decisions []decisionRequest `json:"decisions"`
}

// itemRequest is the body of the single-item decisions.
type itemRequest struct {
	By        string          `json:"by"`
	Reason    string          `json:"reason"`
	Arguments json.RawMessage `json:"arguments"`
	Result    json.RawMessage `json:"result"`
	Details   json.RawMessage `json:"details"`
	Answer    string          `json:"answer"`
	Content   json.RawMessage `json:"content"`
}

// decision builds the runtime's decision of d for principal p, or says
// why it cannot.
func (d decisionRequest) decision(p Principal) (weft.Decision, error) {
	by := p.Name
	if d.By != "" {
		if p.Authenticated {
			return weft.Decision{}, fmt.Errorf("decision %q: by is the token's principal, %q; leave it out", d.ID, p.Name)
		}
		by = d.By
	}
	if d.ID == "" {
		return weft.Decision{}, fmt.Errorf("a decision needs the pending item's id")
	}
	var out weft.Decision
	switch d.Action {
	case weft.ActionApprove:
		out = weft.Approve(d.ID, by, d.Arguments)
	case weft.ActionDeny:
		out = weft.Deny(d.ID, by, d.Reason)
	case weft.ActionComplete:
		if len(d.Result) == 0 {
			return weft.Decision{}, fmt.Errorf("decision %q: complete needs a result", d.ID)
		}
		out = weft.Decision{ID: d.ID, Action: weft.ActionComplete, By: by, Result: d.Result}
	case weft.ActionFail:
		out = weft.Fail(d.ID, by, d.Reason)
		out.Result = d.Details
	case weft.ActionAnswer:
		if d.Answer != toolsets.ElicitAccept && d.Answer != toolsets.ElicitDecline && d.Answer != toolsets.ElicitCancel {
			return weft.Decision{}, fmt.Errorf("decision %q: answer %q: want accept, decline or cancel", d.ID, d.Answer)
		}
		if (d.Answer == toolsets.ElicitAccept) != (len(d.Content) > 0) {
			return weft.Decision{}, fmt.Errorf("decision %q: content goes with accept, and only with it", d.ID)
		}
		var content any
		if len(d.Content) > 0 {
			content = d.Content
		}
		out = weft.Answer(d.ID, by, d.Answer, content)
	default:
		return weft.Decision{}, fmt.Errorf("decision %q: action %q: want approve, deny, complete, fail or answer", d.ID, d.Action)
	}
	if (d.Action == weft.ActionDeny || d.Action == weft.ActionFail) && d.Reason == "" {
		return weft.Decision{}, fmt.Errorf("decision %q: %s needs a reason", d.ID, d.Action)
	}
	if len(d.Arguments) > 0 && d.Action != weft.ActionApprove || len(d.Result) > 0 && d.Action != weft.ActionComplete || len(d.Details) > 0 && d.Action != weft.ActionFail ||
		(d.Answer != "" || len(d.Content) > 0) && d.Action != weft.ActionAnswer {
		return weft.Decision{}, fmt.Errorf("decision %q: arguments go with approve, result with complete, details with fail, answer and content with answer", d.ID)
	}
	out.Authenticated = p.Authenticated
	return out, nil
}

// decide sends every decision of the body in one resume of the session's
// waiting run (a resume decides every pending item of the run).
func (a *API) decide(w http.ResponseWriter, r *http.Request) {
	var req decisionsRequest
	if !readJSON(w, r, &req) {
		return
	}
	a.resume(w, r, req.Decisions)
}

// decideOne returns the operation that decides one pending item with
// action.
func (a *API) decideOne(action weft.Action) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req itemRequest
		if !readJSON(w, r, &req) {
			return
		}
		a.resume(w, r, []decisionRequest{{ID: r.PathValue("call"), Action: action, By: req.By, Reason: req.Reason,
			Arguments: req.Arguments, Result: req.Result, Details: req.Details, Answer: req.Answer, Content: req.Content}})
	}
}

// resume sends decisions and answers the resumed run once the session has
// recorded them (follow it with GET .../runs/{run}?wait= or the events).
func (a *API) resume(w http.ResponseWriter, r *http.Request, reqs []decisionRequest) {
	if len(reqs) == 0 {
		writeError(w, http.StatusBadRequest, "bad_request", "no decisions")
		return
	}
	s, ok := a.session(w, r.PathValue("session"))
	if !ok {
		return
	}
	p := principalOf(r.Context())
	ds := make([]weft.Decision, len(reqs))
	for i, d := range reqs {
		var err error
		if ds[i], err = d.decision(p); err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
	}
	runID, err := s.Decide(r.Context(), ds...)
	if err != nil {
		writeRuntimeError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, runRef{SessionID: s.ID(), RunID: runID})
}
