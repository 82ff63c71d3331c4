package actors

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// handlerTimeout bounds one error handler.
const handlerTimeout = time.Minute

// runHandlers performs effRunHandlers: the handlers run one at a time in a
// goroutine, under the host's lifetime (its end cancels a handler and
// stops the rest, which the next process runs); each outcome comes back
// as a handlerDone message.
func (a *sessionActor) runHandlers(c actor.Context, e effRunHandlers) {
	if a.handling == nil {
		a.handling = map[string]bool{}
	}
	for _, h := range e.handlers {
		a.handling[h.key(e.run)] = true
	}
	spec, _ := a.h.Agent(e.agent)
	self, sys, session, life := c.Self(), a.h.system, a.id, a.h.life
	go func() {
		for _, h := range e.handlers {
			if life.Err() != nil {
				return // the host closes: the next process runs what is left
			}
			err := runHandler(life, spec, h, toolsets.HandlerCall{SessionID: session, RunID: e.run, CallID: h.CallID, Tool: h.Tool, Reason: e.reason, Content: h.Content})
			if err != nil && life.Err() != nil {
				return // cut short by the host's end: not recorded, so run again
			}
			sys.Root.Send(self, &handlerDone{run: e.run, reason: e.reason, h: h, err: err})
		}
	}()
}

// errNoHandler: the process has no tool that declares the handler.
var errNoHandler = errors.New("no tool of the agent in this process declares the error handler")

func runHandler(life context.Context, spec *AgentSpec, h HandlerState, call toolsets.HandlerCall) (err error) {
	var fn toolsets.ErrorHandler
	found := false
	if spec != nil {
		for _, t := range spec.Tools {
			if t.Definition().Name == h.Tool {
				fn, found = toolsets.ErrorHandlerOf(t, h.Name)
				break
			}
		}
	}
	if !found || fn.Run == nil {
		return fmt.Errorf("%w: %s of %s", errNoHandler, h.Name, h.Tool)
	}
	ctx, cancel := context.WithTimeout(life, handlerTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn.Run(ctx, call)
}

// onHandlerDone records a handler's outcome.
func (a *sessionActor) onHandlerDone(c actor.Context, m *handlerDone) {
	delete(a.handling, m.h.key(m.run))
	a.do(c, a.core().handlerRan(m), nil)
}

// endsRun reports whether recs end a run that may have error handlers.
func endsRun(recs []record) bool {
	for _, r := range recs {
		if r.Type == events.TypeRunFailed || r.Type == events.TypeRunCancelled {
			return true
		}
	}
	return false
}
