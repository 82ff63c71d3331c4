package toolsets

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Error handlers: cleanup a tool's call leaves for its run to do if the
// run fails critically or is cancelled (the seed's @tool(error_handler=…)).
//
// A tool declares its handlers with [WithErrorHandler]. A call of the tool
// that succeeds registers them — all of them, or those its [Result] names
// in ErrorHandlers — and the registration is recorded: the names are the
// return's public metadata [MetaErrorHandlers], in the call's own
// tool.returned. When the run then fails or is cancelled, the runtime runs
// each registered handler once and records error_handler.ran with its
// outcome; a runtime that restarts runs the handlers whose run ended
// without their error_handler.ran. A handler that fails is recorded with
// its error and not run again.
//
// Once means: a handler that completed and was recorded never runs
// again. A process that dies while a handler runs, or after it ran and
// before its record, runs it again after the restart (at least once), so
// handlers should be idempotent. The runtime finds a handler by its tool
// and name among the agent's loose tools and the tools its toolsets offer
// when prepared again for the ended run (same ToolsetContext).

// MetaErrorHandlers is the public return metadata key that lists the
// error handlers a call registered.
const MetaErrorHandlers = "weft.error_handlers"

// ErrorHandler is a named cleanup function. Run gets the call that
// registered it; ctx ends with the runtime.
type ErrorHandler struct {
	Name string
	Run  func(ctx context.Context, call HandlerCall) error
}

// HandlerCall is what an error handler is told: the call that registered
// it (its return's content) and why its run ended ("failed" or
// "cancelled").
type HandlerCall struct {
	SessionID, RunID, CallID, Tool string
	Reason                         string
	Content                        json.RawMessage
}

// WithErrorHandler declares an error handler of a tool; every successful
// call registers it, unless its Result names the handlers it registers.
func WithErrorHandler(h ErrorHandler) Option {
	return func(s *settings) { s.handlers, s.set = append(s.handlers, h), s.set|fErrorHandler }
}

// handlerTool is a tool that declares error handlers.
type handlerTool interface{ ErrorHandlers() []ErrorHandler }

// ErrorHandlers returns the error handlers the tool declared.
func (t *funcTool[A, R]) ErrorHandlers() []ErrorHandler { return t.handlers }

// ErrorHandlerOf returns the error handler name that tool t declared
// (looking through wrappers).
func ErrorHandlerOf(t Tool, name string) (ErrorHandler, bool) {
	ht, ok := Find[handlerTool](t)
	if !ok {
		return ErrorHandler{}, false
	}
	for _, h := range ht.ErrorHandlers() {
		if h.Name == name {
			return h, true
		}
	}
	return ErrorHandler{}, false
}

// ErrorHandlersOf returns the names of the handlers return ret registered.
func ErrorHandlersOf(ret *Return) []string {
	if ret == nil || !ret.Success {
		return nil
	}
	switch v := ret.Metadata[MetaErrorHandlers].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// registerHandlers records in ret, a success of tool t whose value was
// val, the handlers it registers; a Result naming a handler t does not
// declare fails the call.
func registerHandlers(t Tool, val any, ret Return) Return {
	ht, ok := Find[handlerTool](t)
	if !ok || !ret.Success {
		return ret
	}
	declared := ht.ErrorHandlers()
	if len(declared) == 0 {
		return ret
	}
	names := make([]string, len(declared))
	for i, h := range declared {
		names[i] = h.Name
	}
	var chosen []string
	switch r := val.(type) {
	case Result:
		chosen = r.ErrorHandlers
	case *Result:
		if r != nil {
			chosen = r.ErrorHandlers
		}
	}
	if chosen != nil {
		for _, n := range chosen {
			if !slices.Contains(names, n) {
				failed := Return{CallID: ret.CallID, ToolName: ret.ToolName, Attempts: ret.Attempts, MaxAttempts: ret.MaxAttempts}
				return failed.fromError(outcome{err: NewUserError(fmt.Sprintf("the result registers error handler %q, which the tool does not declare (WithErrorHandler)", n), nil)})
			}
		}
		names = chosen
	}
	if len(names) == 0 {
		return ret
	}
	if ret.Metadata == nil {
		ret.Metadata = map[string]any{}
	}
	ret.Metadata[MetaErrorHandlers] = names
	return ret
}
