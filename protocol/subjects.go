package protocol

import (
	"strings"

	"github.com/weft-run/weft/bus"
)

// The worker subjects, under the root of a bus.Subjects (bus names every
// other subject). Names and ids are each escaped into one subject token
// with bus.EscapeToken.

// WorkerCallSubject returns the subject workers of tool name serve:
// "<root>.worker.call.<name>".
func WorkerCallSubject(s bus.Subjects, name string) (string, error) {
	tok, err := bus.EscapeToken(name)
	if err != nil {
		return "", err
	}
	return s.Root() + ".worker.call." + tok, nil
}

// WorkerCancelSubject returns the subject a node publishes on to cancel
// remote call callID of run runID of session sessionID:
// "<root>.worker.cancel.<session id>.<run id>.<call id>", each escaped
// with bus.EscapeToken. Call ids are unique only within a run (providers
// reuse ids such as "call_1"), so a call is named by the triple.
func WorkerCancelSubject(s bus.Subjects, sessionID, runID, callID string) (string, error) {
	var toks [3]string
	for i, v := range [3]string{sessionID, runID, callID} {
		tok, err := bus.EscapeToken(v)
		if err != nil {
			return "", err
		}
		toks[i] = tok
	}
	return s.Root() + ".worker.cancel." + toks[0] + "." + toks[1] + "." + toks[2], nil
}

// ParseWorkerCancelSubject is the inverse of WorkerCancelSubject: it
// returns the (unescaped) session, run and call ids a cancel subject
// names. A subject that is not a cancel subject of s is a *bus.TokenError.
func ParseWorkerCancelSubject(s bus.Subjects, subject string) (sessionID, runID, callID string, err error) {
	prefix := s.Root() + ".worker.cancel."
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return "", "", "", &bus.TokenError{What: "cancel subject", Value: subject, Reason: "does not start with " + prefix}
	}
	toks := strings.Split(rest, ".")
	if len(toks) != 3 {
		return "", "", "", &bus.TokenError{What: "cancel subject", Value: subject, Reason: "want <session id>.<run id>.<call id>"}
	}
	var ids [3]string
	for i, tok := range toks {
		if ids[i], err = bus.UnescapeToken(tok); err != nil {
			return "", "", "", err
		}
	}
	return ids[0], ids[1], ids[2], nil
}

// WorkerCancelFilter returns the filter of every cancel subject:
// "<root>.worker.cancel.*.*.*".
func WorkerCancelFilter(s bus.Subjects) string { return s.Root() + ".worker.cancel.*.*.*" }

// WorkerDescribeSubject returns the subject every worker answers with its
// WorkerDescription: "<root>.worker.describe".
func WorkerDescribeSubject(s bus.Subjects) string { return s.Root() + ".worker.describe" }
