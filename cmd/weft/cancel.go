package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/projections"
	"github.com/weft-run/weft/protocol"
)

// cancelReport is what weft cancel prints with -o json.
type cancelReport struct {
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
}

// runCancel cancels a run of a session (its last run by default).
func runCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cancel", "SESSION [RUN] [--reason R] [--url URL | --nats URL]", `
Cancels run RUN of SESSION, or the session's last run. Ids may be given by
a unique prefix (4 characters or more). With --url (or $WEFT_URL) it goes
through the node's HTTP API as the token's principal ($WEFT_TOKEN);
otherwise over NATS as the operator role, recording --by (unauthenticated).`, stderr)
	src := addSourceFlagsAs(fs, false, bus.RoleOperator)
	api := addAPIFlags(fs)
	output := addOutputFlag(fs)
	reason := fs.String("reason", "", "why (recorded in run.cancelled)")
	by := fs.String("by", "cli", "over NATS: who cancels, recorded with the cancel")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	set := setFlags(fs)
	switch {
	case len(pos) < 1 || len(pos) > 2:
		return usageError(fs, "needs SESSION and optionally RUN, got %q", pos)
	case set["url"] && set["nats"]:
		return usageError(fs, "--url and --nats exclude each other")
	case set["by"] && api.url != "" && !set["nats"]:
		return usageError(fs, "--by is for NATS: over the API the token's principal cancels")
	}
	if err := runChecks([]func() error{src.check, output.check}); err != nil {
		return err
	}
	session, run := pos[0], ""
	if len(pos) == 2 {
		run = pos[1]
	}
	ctx, cancel := context.WithTimeout(ctx, src.timeout)
	defer cancel()
	var rep cancelReport
	if api.url != "" && !set["nats"] {
		rep, err = cancelOverAPI(ctx, api.url, session, run, *reason)
	} else {
		rep, err = cancelOverNATS(ctx, src, session, run, *by, *reason)
	}
	if err != nil {
		return err
	}
	if output.json() {
		return output.write(stdout, rep)
	}
	_, err = fmt.Fprintf(stdout, "cancelled run %s of session %s\n", rep.RunID, rep.SessionID)
	return err
}

// pickRun resolves run (a prefix, or "" for the last run) among runs.
func pickRun(session, run string, runs []string) (string, error) {
	if run == "" {
		if len(runs) == 0 {
			return "", fmt.Errorf("session %s has no run", session)
		}
		return runs[len(runs)-1], nil
	}
	return resolveID("run", run, runs)
}

// cancelOverAPI resolves the ids through GET /v1/sessions and
// GET /v1/sessions/{session}, then cancels.
func cancelOverAPI(ctx context.Context, base, session, run, reason string) (cancelReport, error) {
	var rep cancelReport
	c, err := newAPIClient(base)
	if err != nil {
		return rep, err
	}
	var rows []projections.SessionSummary
	if len(session) >= minPrefix {
		req, err := c.request(ctx, "GET", "/v1/sessions", nil)
		if err != nil {
			return rep, err
		}
		var list struct {
			Sessions []projections.SessionSummary `json:"sessions"`
		}
		if err := c.do(req, &list); err != nil {
			return rep, err
		}
		rows = list.Sessions
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.SessionID
	}
	if session, err = resolveID("session", session, ids); err != nil {
		return rep, err
	}
	req, err := c.request(ctx, "GET", "/v1/sessions/"+url.PathEscape(session), nil)
	if err != nil {
		return rep, err
	}
	var a projections.SessionArchive
	if err := c.do(req, &a); err != nil {
		return rep, err
	}
	if run, err = pickRun(session, run, runIDs(a)); err != nil {
		return rep, err
	}
	req, err = c.request(ctx, "POST", "/v1/sessions/"+url.PathEscape(session)+"/runs/"+url.PathEscape(run)+"/cancel", map[string]string{"reason": reason})
	if err != nil {
		return rep, err
	}
	if err := c.do(req, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// cancelOverNATS resolves the ids in the log, then sends the cancel
// command.
func cancelOverNATS(ctx context.Context, f *sourceFlags, session, run, by, reason string) (cancelReport, error) {
	var rep cancelReport
	src, err := openSource(ctx, f)
	if err != nil {
		return rep, err
	}
	defer src.Close()
	archive := projections.NewArchive()
	if _, err := src.build(ctx, archive); err != nil {
		return rep, err
	}
	if session, err = resolveID("session", session, archive.Sessions()); err != nil {
		return rep, err
	}
	a, err := archive.Session(session)
	if err != nil {
		return rep, unknownSession(session, err)
	}
	if run, err = pickRun(session, run, runIDs(a)); err != nil {
		return rep, err
	}
	subject, err := bus.Default.Command(session, protocol.VerbCancel)
	if err != nil {
		return rep, err
	}
	body, err := json.Marshal(protocol.CancelCommand{RunID: run, By: by, Reason: reason})
	if err != nil {
		return rep, err
	}
	msg, err := src.nc.RequestWithContext(ctx, subject, body)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return rep, fmt.Errorf("cancel on %s: %w (is a node serving? weft serve)", subject, errNoNode)
	case err != nil && errors.Is(src.nc.LastError(), nats.ErrPermissionViolation):
		return rep, fmt.Errorf("cancel on %s: %w (connect with a role that may cancel: --role operator)", subject, src.nc.LastError())
	case err != nil:
		return rep, fmt.Errorf("cancel on %s: %w", subject, err)
	}
	var reply protocol.CommandReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return rep, fmt.Errorf("cancel on %s: the reply %q is not a command reply: %w", subject, msg.Data, err)
	}
	if reply.Error != nil {
		return rep, fmt.Errorf("the node refused the cancel (%s): %w", reply.Error.Code, reply.Error)
	}
	return cancelReport{SessionID: session, RunID: run}, nil
}

func runIDs(a projections.SessionArchive) []string {
	ids := make([]string, len(a.Runs))
	for i, r := range a.Runs {
		ids[i] = r.RunID
	}
	return ids
}
