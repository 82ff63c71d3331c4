package httpapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/protocol"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// statusOf maps a runtime error to an HTTP status and error code: the
// command error's code when it has one.
var statuses = []struct {
	err    error
	status int
	code   string
}{
	{weft.ErrUnknownAgent, http.StatusNotFound, "unknown_agent"},
	{weft.ErrUnknownRun, http.StatusNotFound, "unknown_run"},
	{weft.ErrUnknownDecision, http.StatusNotFound, "unknown_decision"},
	{weft.ErrSessionBusy, http.StatusConflict, "session_busy"},
	{weft.ErrNotWaiting, http.StatusConflict, "not_waiting"},
	{weft.ErrRunEnded, http.StatusConflict, "run_ended"},
	{weft.ErrAlreadyDecided, http.StatusConflict, "already_decided"},
	{weft.ErrDuplicateDecision, http.StatusUnprocessableEntity, "duplicate_decision"},
	{weft.ErrMissingDecisions, http.StatusUnprocessableEntity, "missing_decisions"},
	{weft.ErrWrongDecision, http.StatusUnprocessableEntity, "wrong_decision"},
	{protocol.ErrBadCommand, http.StatusBadRequest, "bad_command"},
	{protocol.ErrUnavailable, http.StatusServiceUnavailable, "unavailable"},
	{protocol.ErrSessionOwned, http.StatusServiceUnavailable, "unavailable"},
	{weft.ErrSessionDamaged, http.StatusInternalServerError, "session_damaged"},
	{weft.ErrClosed, http.StatusServiceUnavailable, "unavailable"},
	{context.DeadlineExceeded, http.StatusGatewayTimeout, "timeout"},
}

// writeRuntimeError answers err, an error of the runtime.
func writeRuntimeError(w http.ResponseWriter, err error) {
	for _, s := range statuses {
		if errors.Is(err, s.err) {
			writeError(w, s.status, s.code, err.Error())
			return
		}
	}
	writeError(w, http.StatusInternalServerError, "internal", err.Error())
}
