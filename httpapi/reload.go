package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/weft-run/weft"
)

// ErrReloadFailed marks a reload that changed nothing because its spec
// file does not load or register (422 reload_failed).
var ErrReloadFailed = errors.New("reload failed")

// agentSet is the agents the API serves, by name and in order; a reload
// replaces the whole set.
type agentSet struct {
	byName map[string]*weft.Agent
	names  []string
}

// SetAgents makes agents the ones the API starts runs with, from now on
// (a reload gives the new versions' handles). A run already started is
// not affected.
func (a *API) SetAgents(agents []*weft.Agent) error {
	set := &agentSet{byName: map[string]*weft.Agent{}}
	for _, ag := range agents {
		if ag == nil {
			return errors.New("httpapi: a nil agent")
		}
		if _, dup := set.byName[ag.Name()]; dup {
			return fmt.Errorf("httpapi: agent %q is given twice", ag.Name())
		}
		set.byName[ag.Name()] = ag
		set.names = append(set.names, ag.Name())
	}
	a.agents.Store(set)
	return nil
}

// reloadAgents reloads the node's agents (Config.Reload) and answers what
// changed; a spec file that fails is 422 reload_failed naming the file,
// the line and the field, and nothing changed. Every outcome is logged at
// Warn with the principal, so that a token that swaps a node's agents
// leaves a trace at serve's default log level.
func (a *API) reloadAgents(w http.ResponseWriter, r *http.Request) {
	if a.reload == nil {
		writeError(w, http.StatusNotImplemented, "not_reloadable", "this node hosts no spec file (weft serve --agents FILE)")
		return
	}
	who := principalOf(r.Context()).Name
	changes, err := a.reload(r.Context())
	switch {
	case errors.Is(err, ErrReloadFailed):
		a.log.Warn("reload refused", "principal", who, "err", err)
		writeError(w, http.StatusUnprocessableEntity, "reload_failed", err.Error())
		return
	case err != nil:
		a.log.Error("reload", "principal", who, "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the reload failed: "+err.Error())
		return
	}
	a.log.Warn("reloaded agents", "principal", who, "changes", changes)
	writeJSON(w, http.StatusOK, changes)
}
