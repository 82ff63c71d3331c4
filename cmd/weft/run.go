package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/httpapi"
)

// runTimeout is how long weft run waits for a run when --timeout is not
// given: a model's run takes longer than a command's round trip.
const runTimeout = 10 * time.Minute

// runResult is what weft run prints with -o json (and last with jsonl).
type runResult struct {
	SessionID   string            `json:"session_id"`
	RunID       string            `json:"run_id"`
	Status      string            `json:"status"` // running (--no-wait), waiting, completed, failed or cancelled
	Output      json.RawMessage   `json:"output,omitempty"`
	ToolCallIDs []string          `json:"tool_call_ids,omitempty"` // what a waiting run waits for
	Error       *events.ErrorInfo `json:"error,omitempty"`
}

// runOptions are the flags of weft run.
type runOptions struct {
	agent, prompt string
	session, key  string
	wait          bool
	timeout       time.Duration
	output        *outputFlag
	src           *sourceFlags
	apiURL        string
}

// runRun starts a run of an agent a node hosts and follows it.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	f := &runFollower{o: o, stdout: stdout, stderr: stderr}
	if o.apiURL != "" {
		err = runOverAPI(ctx, o, f)
	} else {
		err = runOverNATS(ctx, o, f)
	}
	if err != nil {
		return err
	}
	return f.report()
}

func parseRunFlags(args []string, stderr io.Writer) (runOptions, error) {
	fs := newFlagSet("run", "AGENT PROMPT [--url URL | --nats URL] [--session S] [--idempotency-key K] [--no-wait] [-o json|jsonl]", `
Starts a run of AGENT (an agent the node hosts: weft serve --agents FILE)
with PROMPT and prints the answer as the model writes it, until the run
completes, fails, is cancelled or waits for a decision (weft approvals
lists what it waits for). With --url (or $WEFT_URL) it goes through the
node's HTTP API, following the session's event stream and resuming it with
Last-Event-ID when the connection drops; the bearer token is read from
$WEFT_TOKEN. Otherwise it sends the start over NATS (--nats, as the
operator role). --no-wait prints the ids and returns. With -o jsonl every
event of the run is printed as a line, and the result last.`, stderr)
	o := runOptions{src: addSourceFlagsAs(fs, false, bus.RoleOperator)}
	api := addAPIFlags(fs)
	o.output = addOutputFlag(fs)
	fs.StringVar(&o.session, "session", "", "run in `SESSION` (new or existing; default: a new session)")
	fs.StringVar(&o.key, "idempotency-key", "", "a `KEY` that makes a retried start return the run the first one started")
	fs.BoolVar(&o.wait, "wait", true, "follow the run until it settles")
	noWait := fs.Bool("no-wait", false, "print the session and run ids and return (the same as --wait=false)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	set := setFlags(fs)
	switch {
	case len(pos) != 2 || strings.TrimSpace(pos[1]) == "":
		return o, usageError(fs, "needs AGENT and PROMPT, got %q", pos)
	case set["url"] && set["nats"]:
		return o, usageError(fs, "--url and --nats exclude each other")
	case *noWait && set["wait"] && o.wait:
		return o, usageError(fs, "--wait and --no-wait exclude each other")
	}
	if err := runChecks([]func() error{o.src.check, o.output.check}); err != nil {
		return o, err
	}
	o.agent, o.prompt = pos[0], pos[1]
	o.wait = o.wait && !*noWait
	o.timeout = o.src.timeout
	if !set["timeout"] {
		o.timeout = runTimeout
	}
	if !set["nats"] {
		o.apiURL = api.url
	}
	return o, nil
}

// runFollower prints a run's events as they come and keeps its result.
type runFollower struct {
	o              runOptions
	stdout, stderr io.Writer
	streamed       bool // model text was printed
	res            runResult
}

// event handles an event of the session (raw is its JSON); it reports
// whether the run has settled.
func (f *runFollower) event(ev events.Event, raw []byte) bool {
	if ev.RunID != f.res.RunID {
		return false
	}
	if f.o.output.format == outJSONL {
		fmt.Fprintf(f.stdout, "%s\n", raw)
	}
	data, err := events.Decode(ev)
	if err != nil {
		return false
	}
	text := f.o.output.format == outTable
	switch d := data.(type) {
	case events.ModelDelta:
		if text && d.Text != "" {
			fmt.Fprint(f.stdout, d.Text)
			f.streamed = true
		}
	case events.ToolRequested:
		if text {
			fmt.Fprintf(f.stderr, "→ %s %s\n", d.Tool, compact(d.Arguments))
		}
	case events.RunCompleted:
		f.res.Status, f.res.Output = "completed", d.Output
		return true
	case events.RunFailed:
		f.res.Status, f.res.Error = "failed", &d.Error
		return true
	case events.RunCancelled:
		f.res.Status = "cancelled"
		return true
	case events.RunWaiting:
		f.res.Status, f.res.ToolCallIDs = "waiting", d.ToolCallIDs
		return true
	}
	return false
}

// report prints the result.
func (f *runFollower) report() error {
	if f.o.output.json() {
		return f.o.output.write(f.stdout, f.res)
	}
	r := f.res
	if f.streamed {
		fmt.Fprintln(f.stdout)
	}
	switch r.Status {
	case "completed":
		if !f.streamed {
			var s string
			if json.Unmarshal(r.Output, &s) != nil {
				s = compact(r.Output)
			}
			fmt.Fprintln(f.stdout, s)
		}
		fmt.Fprintf(f.stderr, "run %s of session %s completed\n", r.RunID, r.SessionID)
	case "failed":
		return fmt.Errorf("run %s of session %s failed (%s): %s", r.RunID, r.SessionID, r.Error.Kind, r.Error.Message)
	case "cancelled":
		return fmt.Errorf("run %s of session %s was cancelled", r.RunID, r.SessionID)
	case "waiting":
		fmt.Fprintf(f.stderr, "run %s of session %s waits for a decision on %s (weft approvals; weft approve ID or weft deny ID --reason R)\n",
			r.RunID, r.SessionID, strings.Join(r.ToolCallIDs, ", "))
	default:
		fmt.Fprintf(f.stdout, "started run %s of session %s\n", r.RunID, r.SessionID)
	}
	return nil
}

// runOverAPI starts the run with POST /v1/sessions/{session}/runs (or
// POST /v1/runs with an Idempotency-Key and no --session) and follows the
// session's event stream. The stream opens before the start whenever the
// session is known first: chosen here, given, or derived from the key as
// the API does (KeyedSessionID of the token's principal), so that no live
// model output is missed; the events themselves are read from the
// session's log whenever the stream opens.
func runOverAPI(ctx context.Context, o runOptions, f *runFollower) error {
	c, err := newAPIClient(o.apiURL)
	if err != nil {
		return err
	}
	// The session to follow, known before the start when possible so
	// that the stream opens first and no live output is missed.
	session := o.session
	switch {
	case session == "" && o.key == "":
		session = uuid.Must(uuid.NewV7()).String()
	case session == "":
		// The API derives the session from the principal and the key:
		// ask who the token is.
		req, err := c.request(ctx, "GET", "/v1/whoami", nil)
		if err != nil {
			return err
		}
		var who struct {
			Principal string `json:"principal"`
		}
		if err := c.do(req, &who); err != nil {
			return err
		}
		session = httpapi.KeyedSessionID(who.Principal, o.key)
	}
	type sseItem struct {
		ev  events.Event
		raw []byte
	}
	type stream struct {
		items chan sseItem
		errc  chan error
		stop  context.CancelFunc
	}
	follow := func(session string) *stream {
		sctx, stop := context.WithCancel(ctx)
		st := &stream{items: make(chan sseItem, 1024), errc: make(chan error, 1), stop: stop}
		path := "/v1/sessions/" + url.PathEscape(session) + "/events?deltas=true"
		go func() {
			st.errc <- c.followSSE(sctx, path, func(s sseEvent) (bool, error) {
				ev, err := events.ParseEvent(s.data)
				if err != nil {
					return false, nil
				}
				select {
				case st.items <- sseItem{ev, s.data}:
					return false, nil
				case <-sctx.Done():
					return true, nil
				}
			})
		}()
		return st
	}
	var st *stream
	if o.wait {
		st = follow(session)
		defer func() { st.stop() }()
	}
	path := "/v1/runs"
	if o.session != "" || o.key == "" {
		path = "/v1/sessions/" + url.PathEscape(session) + "/runs"
	}
	req, err := c.request(ctx, "POST", path, map[string]string{"agent": o.agent, "prompt": o.prompt})
	if err != nil {
		return err
	}
	if o.key != "" {
		req.Header.Set("Idempotency-Key", o.key)
	}
	var ref struct {
		SessionID string `json:"session_id"`
		RunID     string `json:"run_id"`
	}
	if err := c.do(req, &ref); err != nil {
		return err
	}
	f.res = runResult{SessionID: ref.SessionID, RunID: ref.RunID, Status: "running"}
	if !o.wait {
		return nil
	}
	if ref.SessionID != session {
		// A node that derives the session otherwise: follow the one it
		// names, from its log (its live output so far is missed).
		st.stop()
		st = follow(ref.SessionID)
	}
	for {
		select {
		case it := <-st.items:
			if f.event(it.ev, it.raw) {
				return nil
			}
		case err := <-st.errc:
			return fmt.Errorf("follow run %s of session %s: %w", ref.RunID, ref.SessionID, err)
		case <-ctx.Done():
			return fmt.Errorf("wait for run %s of session %s: %w (it goes on: weft show %s)", ref.RunID, ref.SessionID, ctx.Err(), ref.SessionID)
		}
	}
}

// timeAfter is the wait before reconnect attempt n: 100 ms, doubling up
// to 2 s.
func timeAfter(n int) <-chan time.Time {
	d := 100 * time.Millisecond << min(n, 5)
	return time.After(min(d, 2*time.Second))
}
