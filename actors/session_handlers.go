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
	tools := a.handlerTools(e)
	self, sys, session, life, log := c.Self(), a.h.system, a.id, a.h.life, a.h.log
	go func() {
		defer func() {
			if err := tools.close(); err != nil {
				log.Warn("error handlers: a toolset's exit failed", "session", session, "run", e.run, "err", err)
			}
		}()
		for _, h := range e.handlers {
			if life.Err() != nil {
				return // the host closes: the next process runs what is left
			}
			err := runHandler(life, tools, h, toolsets.HandlerCall{SessionID: session, RunID: e.run, CallID: h.CallID, Tool: h.Tool, Reason: e.reason, Content: h.Content})
			if err != nil && life.Err() != nil {
				return // cut short by the host's end: not recorded, so run again
			}
			sys.Root.Send(self, &handlerDone{run: e.run, reason: e.reason, h: h, err: err})
		}
	}()
}

// errNoHandler: the process has no tool that declares the handler.
var errNoHandler = errors.New("no tool of the agent in this process declares the error handler")

// handlerTools is the lookup of e's handlers: the run's agent (at the
// run's version) and the ToolsetContext its last step was prepared with.
func (a *sessionActor) handlerTools(e effRunHandlers) *handlerTools {
	tc := toolsets.ToolsetContext{AgentID: e.agent, RunID: e.run, SessionID: a.id, ConversationID: a.id}
	var spec *AgentSpec
	if r := a.st.Run(e.run); r != nil {
		spec, _ = a.h.AgentVersion(r.Agent, runVersion(r))
		tc.RunStep, tc.Metadata = r.Step, r.Metadata
	}
	if spec == nil {
		return newHandlerTools(nil, nil, tc)
	}
	tc.WorkspaceRoot, tc.Environment, tc.Resources = spec.WorkspaceRoot, spec.Environment, spec.Resources
	var runSets []toolsets.Toolset
	if v, ok := a.h.runToolsets.Load(e.run); ok {
		runSets = v.([]toolsets.Toolset)
	}
	return newHandlerTools(spec, runSets, tc)
}

func runHandler(life context.Context, tools *handlerTools, h HandlerState, call toolsets.HandlerCall) (err error) {
	t, err := tools.tool(life, h.Tool)
	if err != nil {
		return err
	}
	var fn toolsets.ErrorHandler
	found := false
	if t != nil {
		fn, found = toolsets.ErrorHandlerOf(t, h.Name)
	}
	if !found || fn.Run == nil {
		return tools.notFound(h)
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
