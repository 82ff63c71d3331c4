package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/weft-run/weft/agentspec"
	"github.com/weft-run/weft/httpapi"
)

// reloadReport is what a reload changed (POST /v1/agents/reload answers
// it): agent names, and the version of every agent now hosted.
type reloadReport struct {
	File      string            `json:"file"`
	Added     []string          `json:"added"`
	Changed   []string          `json:"changed"`
	Removed   []string          `json:"removed"`
	Unchanged []string          `json:"unchanged"`
	Versions  map[string]string `json:"versions"`
}

// agentReloader reloads a node's spec file, on SIGHUP and on
// POST /v1/agents/reload, one reload at a time.
type agentReloader struct {
	mu   sync.Mutex
	n    *node
	path string
	api  *httpapi.API // nil without --http
}

// reload loads the file again and hosts what changed (agentspec
// File.Reload). A file that does not load or register changes nothing:
// the error wraps httpapi.ErrReloadFailed and names the file, the line
// and the field.
func (r *agentReloader) reload(ctx context.Context) (reloadReport, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := agentspec.Load(r.path)
	if err != nil {
		return reloadReport{}, fmt.Errorf("%w: nothing changed: %w", httpapi.ErrReloadFailed, err)
	}
	h, ch, err := f.Reload(ctx, r.n.rt, r.n.hosted, nil)
	var se *agentspec.Error
	if errors.As(err, &se) {
		return reloadReport{}, fmt.Errorf("%w: nothing changed: %w", httpapi.ErrReloadFailed, err)
	}
	if err != nil {
		return reloadReport{}, err
	}
	// The earlier agents' toolsets stay open for their runs (and for the
	// unchanged agents, which are theirs): closed with the node.
	r.n.earlier = append(r.n.earlier, r.n.hosted)
	r.n.specs, r.n.hosted = f, h
	if r.api != nil {
		if err := r.api.SetAgents(r.n.apiAgents()); err != nil {
			return reloadReport{}, err
		}
	}
	rep := reloadReport{File: f.Name(), Added: ch.Added, Changed: ch.Changed, Removed: ch.Removed, Unchanged: ch.Unchanged, Versions: f.Versions()}
	for _, l := range []*[]string{&rep.Added, &rep.Changed, &rep.Removed, &rep.Unchanged} {
		if *l == nil {
			*l = []string{}
		}
	}
	return rep, nil
}

// setAPI gives the reloader the API whose agents each reload replaces,
// with the agents of a reload that came before it.
func (r *agentReloader) setAPI(api *httpapi.API) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.api = api
	return api.SetAgents(r.n.apiAgents())
}

// notifySIGHUP delivers the process's SIGHUPs (which then no longer
// end it) to the returned channel until stop.
func notifySIGHUP() (hup <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// onSIGHUP reloads on every signal of hup until ctx ends, saying on w
// what changed or why nothing did.
func (r *agentReloader) onSIGHUP(ctx context.Context, hup <-chan os.Signal, w io.Writer) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			rep, err := r.reload(ctx)
			if err != nil {
				fmt.Fprintf(w, "weft serve: reload of %s: %v\n", r.path, err)
				continue
			}
			fmt.Fprintf(w, "weft serve: reloaded %s: added %v, changed %v, removed %v\n", rep.File, rep.Added, rep.Changed, rep.Removed)
		}
	}
}
