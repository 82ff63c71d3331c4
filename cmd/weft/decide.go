package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// The decision commands' actions (the protocol's).
const (
	actionApprove  = actors.ActionApprove
	actionDeny     = actors.ActionDeny
	actionComplete = actors.ActionComplete
	actionFail     = actors.ActionFail
	actionAnswer   = actors.ActionAnswer
)

// Errors of the decision commands, matched with errors.Is.
var (
	// errNotPending: an id that is not pending (in the session given).
	errNotPending = errors.New("not pending")
	// errAmbiguous: an id pending in several sessions, and no --session.
	errAmbiguous = errors.New("pending in several sessions")
	// errNoNode: nothing answered the command.
	errNoNode = errors.New("no node answered")
)

// decideOptions are the flags of a decision command.
type decideOptions struct {
	action  string
	ids     []string
	session string
	by      string
	reason  string
	args    json.RawMessage // approve: reviewed arguments
	result  json.RawMessage // complete: the deferred call's result; answer: the answer
	// answer: decline or cancel instead of content.
	decline, cancel bool
	json            bool
	wait            bool
	src             *sourceFlags
}

// decideReport is what a decision command prints with --json.
type decideReport struct {
	SessionID string            `json:"session_id"`
	RunID     string            `json:"run_id"`
	Version   uint64            `json:"version"`
	Decisions []actors.Decision `json:"decisions"`
	Settled   *events.Event     `json:"settled,omitempty"`
}

// decideCommand returns the command that sends decisions of action.
func decideCommand(action string) func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		o, err := parseDecideFlags(action, args, stderr)
		if err != nil {
			return err
		}
		return decide(ctx, o, stdout)
	}
}

func parseDecideFlags(action string, args []string, stderr io.Writer) (decideOptions, error) {
	o := decideOptions{action: action}
	synopsis := map[string]string{
		actionApprove:  "ID... [--session S] [--by NAME] [--args JSON] [--nats URL] [--json]",
		actionDeny:     "ID... --reason R [--session S] [--by NAME] [--nats URL] [--json]",
		actionComplete: "ID... --result JSON [--session S] [--by NAME] [--nats URL] [--json]",
		actionFail:     "ID... --reason R [--details JSON] [--session S] [--by NAME] [--nats URL] [--json]",
		actionAnswer:   "ID --content JSON | --decline | --cancel [--session S] [--by NAME] [--nats URL] [--json]",
	}[action]
	fs := newFlagSet(action, synopsis, fmt.Sprintf(`
Decides pending items (ids from weft approvals) on a running node: sends a
resume command over NATS (%s) and waits until the run settles again.
A resume decides every pending item of a run: when the run waits for several,
give all their ids. The session is found from the HITL queue unless --session
names it.`, "weft.cmd.session.<id>.resume"), stderr)
	o.src = addSourceFlagsAs(fs, false, bus.RoleApprover) // decisions are resume commands
	fs.StringVar(&o.session, "session", "", "the `SESSION` of the ids (default: found in the HITL queue)")
	fs.StringVar(&o.by, "by", "cli", "who decides, recorded with the decision")
	output := addOutputFlag(fs)
	fs.BoolVar(&o.wait, "wait", true, "wait until the resumed run settles and print how")
	var rawArgs, rawResult string
	switch action {
	case actionApprove:
		fs.StringVar(&rawArgs, "args", "", "reviewed arguments of the call, a JSON `object` replacing the model's")
	case actionDeny:
		fs.StringVar(&o.reason, "reason", "", "why (required; the model is told)")
	case actionFail:
		fs.StringVar(&o.reason, "reason", "", "why (required; the model is told)")
		fs.StringVar(&rawResult, "details", "", "structured details of the failure, `JSON` (optional; the model sees them with the reason)")
	case actionComplete:
		fs.StringVar(&rawResult, "result", "", "the deferred call's result, `JSON` (required)")
	case actionAnswer:
		fs.StringVar(&rawResult, "content", "", "the answer, a JSON `object` fitting the requested schema (weft approvals shows it)")
		fs.BoolVar(&o.decline, "decline", false, "decline to answer")
		fs.BoolVar(&o.cancel, "cancel", false, "dismiss the question without choosing")
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	if err := output.check(); err != nil {
		return o, err
	}
	o.json = output.json()
	o.ids = pos
	set := setFlags(fs)
	switch {
	case len(pos) == 0:
		return o, usageError(fs, "needs the ID of a pending item (weft approvals lists them)")
	case o.by == "":
		return o, usageError(fs, "--by needs a name")
	case (action == actionDeny || action == actionFail) && o.reason == "":
		return o, usageError(fs, "needs --reason")
	case action == actionComplete && !set["result"]:
		return o, usageError(fs, "needs --result JSON")
	case action == actionAnswer && b2i(set["content"])+b2i(o.decline)+b2i(o.cancel) != 1:
		return o, usageError(fs, "needs exactly one of --content JSON, --decline and --cancel")
	case action == actionAnswer && len(pos) != 1:
		return o, usageError(fs, "answers one ID at a time")
	case set["session"] && o.session == "":
		return o, usageError(fs, "--session needs a session id")
	}
	for i, id := range pos {
		if id == "" {
			return o, usageError(fs, "ID %d is empty", i+1)
		}
		if slices.Index(pos, id) != i {
			return o, usageError(fs, "ID %q is given twice", id)
		}
	}
	if set["args"] {
		var v any
		err := json.Unmarshal([]byte(rawArgs), &v)
		if _, isObject := v.(map[string]any); err != nil || !isObject {
			return o, usageError(fs, "--args must be a JSON object: %s", jsonProblem(rawArgs, err))
		}
		if len(pos) > 1 {
			return o, usageError(fs, "--args replaces one call's arguments: approve one ID with it")
		}
		o.args = json.RawMessage(rawArgs)
	}
	if action == actionAnswer {
		answer := map[string]any{"action": "accept"}
		switch {
		case o.decline:
			answer["action"] = "decline"
		case o.cancel:
			answer["action"] = "cancel"
		default:
			var v any
			err := json.Unmarshal([]byte(rawResult), &v)
			if _, isObject := v.(map[string]any); err != nil || !isObject {
				return o, usageError(fs, "--content must be a JSON object: %s", jsonProblem(rawResult, err))
			}
			answer["content"] = json.RawMessage(rawResult)
		}
		o.result, _ = json.Marshal(answer)
	} else if set["result"] || set["details"] {
		if !json.Valid([]byte(rawResult)) {
			var v any
			flag := "--result"
			if action == actionFail {
				flag = "--details"
			}
			return o, usageError(fs, "%s must be JSON: %s", flag, jsonProblem(rawResult, json.Unmarshal([]byte(rawResult), &v)))
		}
		o.result = json.RawMessage(rawResult)
	}
	if err := o.src.check(); err != nil {
		return o, err
	}
	return o, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// jsonProblem says what is wrong with s as JSON.
func jsonProblem(s string, err error) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "it is empty"
	case err != nil:
		return fmt.Sprintf("%q: %v", s, err)
	default:
		return fmt.Sprintf("%q is not an object", s)
	}
}

// decide finds the run of o.ids, sends the resume and reports.
func decide(ctx context.Context, o decideOptions, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, o.src.timeout)
	defer cancel()
	src, err := openSource(ctx, o.src)
	if err != nil {
		return err
	}
	defer src.Close()
	queue := projections.NewQueue()
	if _, err := src.build(ctx, queue); err != nil {
		return err
	}
	if o.ids, err = resolvePending(queue.Items(), o.ids); err != nil {
		return fmt.Errorf("%s: %w", o.action, err)
	}
	if o.session != "" {
		var sessions []string
		for _, it := range queue.Items() {
			sessions = append(sessions, it.SessionID)
		}
		if o.session, err = resolveID("session", o.session, sessions); err != nil {
			return fmt.Errorf("%s: %w", o.action, err)
		}
	}
	sessionID, runID, err := findRun(queue.Items(), o.ids, o.session, o.action)
	if err != nil {
		return fmt.Errorf("%s: %w", o.action, err)
	}
	cmd := actors.ResumeCommand{RunID: runID}
	for _, id := range o.ids {
		cmd.Decisions = append(cmd.Decisions, actors.Decision{ID: id, Action: o.action, By: o.by, Reason: o.reason, Arguments: o.args, Result: o.result})
	}

	// Watch the session's run.* events before resuming, so that the
	// event settling the run cannot be missed.
	var settled chan *nats.Msg
	if o.wait {
		filter, err := bus.Default.StreamEvents(events.SessionStream(sessionID))
		if err != nil {
			return fmt.Errorf("%s: %w", o.action, err)
		}
		settled = make(chan *nats.Msg, 256)
		sub, err := src.nc.ChanSubscribe(filter, settled)
		if err != nil {
			return fmt.Errorf("%s: subscribe to %s: %w", o.action, filter, err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	reply, err := sendResumeRetrying(ctx, src.nc, sessionID, cmd)
	if err != nil {
		return fmt.Errorf("%s: %w", o.action, err)
	}
	rep := decideReport{SessionID: sessionID, RunID: reply.RunID, Version: reply.Version, Decisions: cmd.Decisions}
	if rep.RunID == "" {
		rep.RunID = runID
	}
	if !o.json {
		fmt.Fprintf(stdout, "resumed run %s of session %s (version %d):\n", rep.RunID, sessionID, reply.Version)
		for _, d := range cmd.Decisions {
			fmt.Fprintf(stdout, "  %s\n", describeDecision(d))
		}
	}
	if o.wait {
		ev, err := awaitSettled(ctx, settled, rep.RunID)
		if err != nil {
			return fmt.Errorf("%s: %w", o.action, err)
		}
		rep.Settled = &ev
		if !o.json {
			fmt.Fprintf(stdout, "run %s %s\n", rep.RunID, settledLine(ev))
		}
	}
	if o.json {
		return writeJSON(stdout, rep)
	}
	return nil
}

// findRun finds the session and run the pending ids belong to, and checks
// that they are every pending item of that run.
func findRun(items []projections.QueueItem, ids []string, session, action string) (sessionID, runID string, err error) {
	type key struct{ session, run string }
	var at key
	for _, id := range ids {
		var found []projections.QueueItem
		for _, it := range items {
			if it.ToolCallID == id && (session == "" || it.SessionID == session) {
				found = append(found, it)
			}
		}
		switch {
		case len(found) == 0 && session != "":
			return "", "", fmt.Errorf("%q: %w in session %s (weft approvals lists what is)", id, errNotPending, session)
		case len(found) == 0:
			return "", "", fmt.Errorf("%q: %w (weft approvals lists what is)", id, errNotPending)
		case len(found) > 1:
			var where []string
			for _, it := range found {
				where = append(where, fmt.Sprintf("%s (run %s, %s)", it.SessionID, it.RunID, it.Tool))
			}
			return "", "", fmt.Errorf("%q is %w: %s; name one with --session", id, errAmbiguous, strings.Join(where, ", "))
		}
		k := key{found[0].SessionID, found[0].RunID}
		if at != (key{}) && k != at {
			return "", "", fmt.Errorf("the ids belong to different runs (%s of session %s, %s of session %s): one resume decides one run", at.run, at.session, k.run, k.session)
		}
		at = k
	}
	var missing []string
	for _, it := range items {
		if it.SessionID == at.session && it.RunID == at.run && !slices.Contains(ids, it.ToolCallID) {
			missing = append(missing, fmt.Sprintf("%s (%s %s)", it.ToolCallID, it.Kind, it.Tool))
		}
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("run %s of session %s also waits for %s: a resume decides every pending item of a run, so give all their ids (weft %s %s %s)",
			at.run, at.session, strings.Join(missing, ", "), action, strings.Join(ids, " "), strings.Join(firstWords(missing), " "))
	}
	return at.session, at.run, nil
}

func firstWords(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i], _, _ = strings.Cut(s, " ")
	}
	return out
}

// sendResume sends cmd on the session's resume subject and returns the
// node's reply; a refusal is an error wrapping the *actors.CommandError.
func sendResume(ctx context.Context, nc *nats.Conn, sessionID string, cmd actors.ResumeCommand) (actors.CommandReply, error) {
	var reply actors.CommandReply
	subject, err := bus.Default.Command(sessionID, actors.VerbResume)
	if err != nil {
		return reply, err
	}
	body, err := json.Marshal(cmd)
	if err != nil {
		return reply, fmt.Errorf("encode the resume command: %w", err)
	}
	msg, err := nc.RequestWithContext(ctx, subject, body)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return reply, fmt.Errorf("resume on %s: %w (is a node serving? weft serve)", subject, errNoNode)
	case err != nil && errors.Is(nc.LastError(), nats.ErrPermissionViolation):
		// The server dropped the request: the connection's role may not
		// send decisions (it says so asynchronously; the request only
		// times out).
		return reply, fmt.Errorf("resume on %s: %w (connect with a role that may decide: --role approver)", subject, nc.LastError())
	case err != nil:
		return reply, fmt.Errorf("resume on %s: %w", subject, err)
	}
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return reply, fmt.Errorf("resume on %s: the reply %q is not a command reply: %w", subject, msg.Data, err)
	}
	if reply.Error != nil {
		return reply, fmt.Errorf("the node refused it (%s): %w", reply.Error.Code, reply.Error)
	}
	return reply, nil
}

// sendResumeRetrying is sendResume, tried again while the node refuses
// with session_owned (the session's lease is moving to another node, or
// is held by a node that died before it expired) or
// unavailable (its log or lease bucket is briefly unreachable) — refusals
// that guarantee nothing was recorded — waiting 100 ms, doubling up to
// 1 s, until ctx ends; it then returns the last refusal. A timeout is not
// retried: the decision may have been recorded.
func sendResumeRetrying(ctx context.Context, nc *nats.Conn, sessionID string, cmd actors.ResumeCommand) (actors.CommandReply, error) {
	var reply actors.CommandReply
	var last error
	send := func() (struct{}, error) {
		reply, last = sendResume(ctx, nc, sessionID, cmd)
		if errors.Is(last, actors.ErrSessionOwned) || errors.Is(last, actors.ErrUnavailable) {
			return struct{}{}, last
		}
		return struct{}{}, backoff.Permanent(last) // nil when accepted
	}
	// The last answer is the outcome; the loop's own error when ctx ends
	// (the context's) would hide the refusal that kept it waiting.
	_, _ = backoff.Retry(ctx, send, backoff.WithMaxElapsedTime(0), backoff.WithBackOff(&backoff.ExponentialBackOff{
		InitialInterval: 100 * time.Millisecond, Multiplier: 2, MaxInterval: time.Second}))
	return reply, last
}

// awaitSettled waits for the event that settles run on ch.
func awaitSettled(ctx context.Context, ch <-chan *nats.Msg, runID string) (events.Event, error) {
	for {
		select {
		case <-ctx.Done():
			return events.Event{}, fmt.Errorf("wait for run %s to settle: %w", runID, ctx.Err())
		case m := <-ch:
			ev, err := events.ParseEvent(m.Data)
			if err != nil || ev.RunID != runID {
				continue
			}
			if settledLine(ev) != "" {
				return ev, nil
			}
		}
	}
}

func describeDecision(d actors.Decision) string {
	s := fmt.Sprintf("%s %s by %s", d.Action, d.ID, d.By)
	if d.Reason != "" {
		s += ": " + d.Reason
	}
	if len(d.Arguments) > 0 {
		s += " with arguments " + compact(d.Arguments)
	}
	if len(d.Result) > 0 {
		s += " with result " + compact(d.Result)
	}
	return s
}

// resolvePending returns ids with each short id replaced by the pending
// item's id it begins (resolveID); two ids naming the same item are
// refused.
func resolvePending(items []projections.QueueItem, ids []string) ([]string, error) {
	all := make([]string, len(items))
	for i, it := range items {
		all[i] = it.ToolCallID
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		full, err := resolveID("pending id", id, all)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out[:i], full) {
			return nil, fmt.Errorf("%w: %q and another id name the same item %s", errUsage, id, full)
		}
		out[i] = full
	}
	return out, nil
}
