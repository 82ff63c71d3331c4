package actors

import (
	"bytes"
	"encoding/json"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// Error handlers (toolsets.WithErrorHandler) in the session core.
//
// A call's tool.returned records the handlers it registered (return
// metadata toolsets.MetaErrorHandlers); the fold keeps them per run
// (RunState.Handlers), and error_handler.ran marks one as run. A handler
// is due when its run ended failed or cancelled and it has not run: the
// core asks the shell to run the due handlers (effRunHandlers) — after
// the run's end is appended, and whenever the session is asked again, so
// a restarted process runs the handlers its predecessor left (Recover
// starts the sessions that have some, see handlerScan). The shell runs
// them one at a time in a goroutine and hands each outcome back
// (handlerDone); the core records it as error_handler.ran. Due-ness is a
// fold of the log only, so it does not depend on what the process that
// ended the run did before it died.

// HandlerState is an error handler a call of a run registered.
type HandlerState struct {
	CallID, Tool, Name string
	// Content is the registering return's content (the handler is told).
	Content json.RawMessage
	// Ran: its error_handler.ran is recorded.
	Ran bool
}

func (h HandlerState) key(run string) string { return run + "\x00" + h.CallID + "\x00" + h.Name }

// effRunHandlers runs the due error handlers of run, one at a time.
type effRunHandlers struct {
	run      string
	agent    string
	reason   string
	handlers []HandlerState
}

func (effRunHandlers) isEffect() {}

// handlerDone is the outcome of one error handler the shell ran.
type handlerDone struct {
	run, reason string
	h           HandlerState
	err         error
}

// dueHandlers decides to run the error handlers that are due and not
// under way in this process (k.handling).
func (k core) dueHandlers() decision {
	var effs []effect
	for _, id := range k.st.Order {
		r := k.st.Runs[id]
		if r.Status != StatusFailed && r.Status != StatusCancelled {
			continue
		}
		e := effRunHandlers{run: r.ID, agent: r.Agent, reason: string(r.Status)}
		for _, h := range r.Handlers {
			if !h.Ran && !k.handling[h.key(r.ID)] {
				e.handlers = append(e.handlers, *h)
			}
		}
		if len(e.handlers) > 0 {
			effs = append(effs, e)
		}
	}
	return decision{effects: effectsOf(effs)}
}

// handlerRan decides on a handler's outcome: its error_handler.ran.
func (k core) handlerRan(m *handlerDone) decision {
	r := k.st.Run(m.run)
	if r == nil {
		return decision{}
	}
	for _, h := range r.Handlers {
		if h.CallID == m.h.CallID && h.Name == m.h.Name && !h.Ran {
			d := events.ErrorHandlerRan{Tool: h.Tool, Handler: h.Name, Reason: m.reason}
			if m.err != nil {
				d.Error = &events.ErrorInfo{Message: m.err.Error(), Type: toolsets.ErrorType(m.err)}
			}
			return decision{recs: []record{newRecord(events.TypeErrorHandlerRan, k.session, r.ID, h.CallID, d)}}
		}
	}
	return decision{}
}

// foldHandlers keeps the handlers return ret of call c registered.
func (r *RunState) foldHandlers(c *CallState, ret *toolsets.Return) {
	for _, name := range toolsets.ErrorHandlersOf(ret) {
		r.Handlers = append(r.Handlers, &HandlerState{CallID: c.ID, Tool: c.Tool, Name: name, Content: ret.Content})
	}
}

// foldHandlerRan marks the handler an error_handler.ran records.
func (r *RunState) foldHandlerRan(rec record) error {
	d, err := decode[events.ErrorHandlerRan](rec)
	if err != nil {
		return err
	}
	for _, h := range r.Handlers {
		if h.CallID == rec.ToolCallID && h.Name == d.Handler {
			h.Ran = true
		}
	}
	return nil
}

// handlerScan finds, in a scan of the log (Recover), the sessions whose
// error handlers are due: a run that ended failed or cancelled with more
// handlers registered than ran.
type handlerScan struct {
	registered map[string]int  // run → handlers registered
	ran        map[string]int  // run → handlers ran
	ended      map[string]bool // run ended failed or cancelled
	sessionOf  map[string]string
}

var handlersKey = []byte(toolsets.MetaErrorHandlers)

func (s *handlerScan) observe(ev events.Event) {
	if s.registered == nil {
		s.registered, s.ran, s.ended, s.sessionOf = map[string]int{}, map[string]int{}, map[string]bool{}, map[string]string{}
	}
	switch ev.Type {
	case events.TypeToolReturned:
		if !bytes.Contains(ev.Data, handlersKey) {
			return
		}
		var d struct {
			Return struct {
				Success  bool `json:"success"`
				Metadata map[string]json.RawMessage
			} `json:"return"`
		}
		if json.Unmarshal(ev.Data, &d) != nil || !d.Return.Success {
			return
		}
		var names []string
		_ = json.Unmarshal(d.Return.Metadata[toolsets.MetaErrorHandlers], &names)
		s.registered[ev.RunID] += len(names)
		s.sessionOf[ev.RunID] = ev.SessionID
	case events.TypeErrorHandlerRan:
		s.ran[ev.RunID]++
	case events.TypeRunFailed, events.TypeRunCancelled:
		s.ended[ev.RunID] = true
	}
}

// due reports whether session id has due handlers.
func (s *handlerScan) due(id string) bool {
	for run, n := range s.registered {
		if s.sessionOf[run] == id && s.ended[run] && n > s.ran[run] {
			return true
		}
	}
	return false
}
