package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// demoOptions are the flags of weft demo.
type demoOptions struct {
	dataDir string        // keep the data directory here; "" = a temporary one
	deny    bool          // deny the deploy instead of approving it
	reason  string        // the denial's reason
	by      string        // who decides
	json    bool          // events as JSON lines
	timeout time.Duration // bound on the whole demo
	serve   bool          // leave the run waiting and serve (weft serve --demo)
	listen  string        // where the served node listens
	// insecureListen accepts a non-loopback -listen without TLS.
	insecureListen bool
}

// The demo's fixed scene: a support agent fixes ticket T-7.
const (
	demoAgent  = "support"
	demoPrompt = "Ticket T-7: find the release that fixes it and deploy it."
	demoTicket = "T-7"
)

// parseDemoFlags parses the flags of weft demo. Mistakes are errUsage.
func parseDemoFlags(args []string, stderr io.Writer) (demoOptions, error) {
	var o demoOptions
	fs := newFlagSet("demo", "[--approve | --deny REASON] [--by NAME] [--data DIR] [-o json] [--timeout D]", `
       weft demo --serve [--listen HOST:PORT [--insecure-listen]] [--data DIR] [-o json]

Runs an agent on the embedded runtime (nats-server + JetStream): lookup and
fetch_ticket in parallel, then deploy, which waits for an approval that the
flags decide; the run is resumed and completes. Reads no input.

With --serve the run is left waiting on a node that serves until interrupted
(weft serve --demo): decide it from a second terminal with weft approve
(--creds-dir DIR/credentials, printed at start).`, stderr)
	approve := fs.Bool("approve", true, "approve the deploy (the default)")
	fs.StringVar(&o.reason, "deny", "", "deny the deploy with this `reason`")
	fs.StringVar(&o.by, "by", "cli", "who decides, recorded with the decision")
	fs.StringVar(&o.dataDir, "data", "", "keep the data directory (the JetStream event log) in `DIR`; default: a temporary one removed at exit")
	output := addOutputFlag(fs)
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up after this long")
	fs.BoolVar(&o.serve, "serve", false, "leave the run waiting for approval and serve until interrupted (weft serve --demo)")
	fs.StringVar(&o.listen, "listen", defaultListen, "with -serve: the `HOST:PORT` other weft commands connect to")
	fs.BoolVar(&o.insecureListen, "insecure-listen", false, "with -serve: accept a -listen address other machines can reach, without TLS")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if err := output.check(); err != nil {
		return o, err
	}
	o.json = output.json() // the events as JSON lines (notes go to stderr)
	set := map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { set[f.Name] = true })
	o.deny = set["deny"]
	switch {
	case fs.NArg() > 0:
		fs.Usage()
		return o, fmt.Errorf("%w: demo takes no arguments, got %q", errUsage, fs.Args())
	case o.deny && set["approve"] && *approve:
		fs.Usage()
		return o, fmt.Errorf("%w: demo: -approve and -deny exclude each other", errUsage)
	case set["approve"] && !*approve && !o.deny:
		fs.Usage()
		return o, fmt.Errorf("%w: demo: -approve=false needs -deny REASON", errUsage)
	case o.deny && o.reason == "":
		fs.Usage()
		return o, fmt.Errorf("%w: demo: -deny needs a reason", errUsage)
	case o.by == "":
		fs.Usage()
		return o, fmt.Errorf("%w: demo: -by needs a name", errUsage)
	case o.serve && (set["approve"] || o.deny || set["by"] || set["timeout"]):
		fs.Usage()
		return o, fmt.Errorf("%w: demo: -serve leaves the decision to weft approve: -approve, -deny, -by and -timeout do not apply", errUsage)
	case !o.serve && (set["listen"] || set["insecure-listen"]):
		fs.Usage()
		return o, fmt.Errorf("%w: demo: -listen and -insecure-listen need -serve", errUsage)
	case o.serve && o.listen == "":
		fs.Usage()
		return o, fmt.Errorf("%w: demo: -listen needs HOST:PORT", errUsage)
	case o.timeout <= 0:
		fs.Usage()
		return o, fmt.Errorf("%w: demo: -timeout must be positive, got %v", errUsage, o.timeout)
	}
	return o, nil
}

// runDemo runs one agent run on the embedded default and prints what
// happened: the session's events as they are appended to the log, the
// pending approval, the decision taken from the flags, and the outcome.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseDemoFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.serve {
		return serve(ctx, serveOptions{node: nodeConfig{dataDir: o.dataDir, listen: o.listen, insecureListen: o.insecureListen}, demo: true, json: o.json}, stdout, stderr)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	dir, keep := o.dataDir, o.dataDir != ""
	if keep {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("demo: create the data directory: %w", err)
		}
	} else {
		if dir, err = os.MkdirTemp("", "weft-demo-"); err != nil {
			return fmt.Errorf("demo: create a temporary data directory: %w", err)
		}
		defer func() {
			if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
				err = fmt.Errorf("demo: remove the data directory: %w", rerr)
			}
		}()
	}
	// The human report goes to stdout; with -json stdout holds only events.
	// The event follower writes from its own goroutine: one lock for both.
	var mu sync.Mutex
	stdout, stderr = &lockedWriter{mu: &mu, w: stdout}, &lockedWriter{mu: &mu, w: stderr}
	notes := stdout
	if o.json {
		notes = stderr
	}
	logDir := filepath.Join(dir, "nats")
	rt, err := weft.Start(ctx, weft.Config{DataDir: dir})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer func() {
		if cerr := rt.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("demo: close the runtime: %w", cerr)
		}
	}()
	cfg, err := demoAgentConfig()
	if err != nil {
		return fmt.Errorf("demo: build the tools: %w", err)
	}
	agent, err := rt.NewAgent(demoAgent, cfg)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	sess := agent.NewSession()
	fmt.Fprintf(notes, "weft demo: agent %q on the embedded runtime (nats-server + JetStream)\n", demoAgent)
	fmt.Fprintf(notes, "event log: %s\n", logDir)
	fmt.Fprintf(notes, "session:   %s\n", sess.ID())
	fmt.Fprintf(notes, "prompt:    %s\n\n", demoPrompt)

	// The events are printed as they are appended to the log, by a
	// follower this function owns; the notes wait until the follower has
	// printed the event that settled the run, so the two never interleave.
	p := &eventPrinter{w: stdout, json: o.json}
	followCtx, stopFollow := context.WithCancel(ctx)
	settled := make(chan events.Type)
	followed := make(chan struct{})
	var followErr error
	go func() {
		defer close(followed)
		followErr = p.follow(followCtx, rt.Store(), events.SessionStream(sess.ID()), settled)
	}()
	defer func() {
		stopFollow()
		<-followed
	}()
	awaitSettled := func() error {
		select {
		case <-settled:
			return nil
		case <-followed:
			if followErr != nil {
				return followErr
			}
			return errors.New("demo: the log follower stopped early")
		case <-ctx.Done():
			return fmt.Errorf("demo: %w", ctx.Err())
		}
	}

	waiting, err := sess.Run(ctx, demoPrompt)
	if err != nil {
		return fmt.Errorf("demo: run: %w", err)
	}
	if err := awaitSettled(); err != nil {
		return err
	}
	if waiting.Status != weft.StatusWaiting || len(waiting.Pending.Approvals) == 0 {
		return fmt.Errorf("demo: the run ended %s without asking for an approval", waiting.Status)
	}

	fmt.Fprintf(notes, "\nstatus: %s, %d approval(s) pending\n", waiting.Status, len(waiting.Pending.Approvals))
	decisions := make([]weft.Decision, 0, len(waiting.Pending.Approvals))
	for _, a := range waiting.Pending.Approvals {
		fmt.Fprintf(notes, "  approval %s: %s %s", a.ID, a.Tool, compact(a.Arguments))
		if a.Reason != "" {
			fmt.Fprintf(notes, " (%s)", a.Reason)
		}
		fmt.Fprintln(notes)
		if o.deny {
			decisions = append(decisions, weft.Deny(a.ID, o.by, o.reason))
			fmt.Fprintf(notes, "decision: deny %s by %s: %s\n", a.ID, o.by, o.reason)
		} else {
			decisions = append(decisions, weft.Approve(a.ID, o.by, nil))
			fmt.Fprintf(notes, "decision: approve %s by %s\n", a.ID, o.by)
		}
	}
	fmt.Fprintln(notes, "\nresuming:")
	res, err := sess.Resume(ctx, decisions...)
	if err != nil {
		return fmt.Errorf("demo: resume: %w", err)
	}
	if err := awaitSettled(); err != nil {
		return err
	}

	fmt.Fprintf(notes, "\noutput: %s\n", res.Output)
	fmt.Fprintf(notes, "status: %s\n", res.Status)
	fmt.Fprintf(notes, "usage:  %s\n", formatUsage(res.Usage))
	if keep {
		fmt.Fprintf(notes, "data directory: %s (kept; the event log is in %s)\n", dir, logDir)
	} else {
		fmt.Fprintf(notes, "data directory: %s (temporary, removed at exit; keep it with -data DIR)\n", dir)
	}
	if res.Status != weft.StatusCompleted {
		return fmt.Errorf("demo: the resumed run ended %s: %v", res.Status, res.Err)
	}
	return nil
}

// lockedWriter serialises writes that share mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// eventPrinter prints session events, one line each.
type eventPrinter struct {
	w     io.Writer
	json  bool
	start time.Time         // the first event's time; offsets count from it
	tools map[string]string // tool name by call id, from tool.requested
}

// follow prints the events of stream as they are appended to the log (after
// the ones already there) and sends the type of each event that settles a
// run on settled, waiting for it to be received. It returns nil when ctx
// ends, or the error that stopped it.
func (p *eventPrinter) follow(ctx context.Context, log events.Subscriber, stream string, settled chan<- events.Type) error {
	for ev, err := range log.Subscribe(ctx, 0) {
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("demo: follow the log: %w", err)
		}
		if ev.Stream != stream {
			continue
		}
		if err := p.print(ev); err != nil {
			return err
		}
		switch ev.Type {
		case events.TypeRunWaiting, events.TypeRunCompleted, events.TypeRunFailed, events.TypeRunCancelled:
			select {
			case settled <- ev.Type:
			case <-ctx.Done():
				return nil
			}
		}
	}
	return nil
}

func (p *eventPrinter) print(ev events.Event) error {
	if p.json {
		b, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("demo: encode event %s: %w", ev.ID, err)
		}
		_, err = fmt.Fprintf(p.w, "%s\n", b)
		return err
	}
	if p.start.IsZero() {
		p.start = ev.Time
	}
	at := ev.Time.Sub(p.start).Round(100 * time.Microsecond)
	_, err := fmt.Fprintf(p.w, "  %3d %8s  %-20s %s\n", ev.Version, "+"+fmt.Sprint(at.Milliseconds())+"ms", ev.Type, p.describe(ev))
	return err
}

// describe says in a few words what an event is about.
func (p *eventPrinter) describe(ev events.Event) string {
	// A live copy of an event whose data is in the blob store carries the
	// reference in its place (see "Large payloads" in the README).
	if ref, ok, err := events.ParseBlobData(ev.Data); err != nil {
		return "(" + err.Error() + ")"
	} else if ok {
		return fmt.Sprintf("(data by reference: %s, %d bytes in the blob store)", ref, ref.Size)
	}
	data, err := events.Decode(ev)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	call := ""
	if ev.ToolCallID != "" {
		call = " call=" + ev.ToolCallID
	}
	switch d := data.(type) {
	case events.RunStarted:
		return "agent=" + d.Agent
	case events.ModelRequest:
		return fmt.Sprintf("model=%s tools=%v", d.Model, d.Tools)
	case events.ModelDelta:
		out := fmt.Sprintf("step=%d seq=%d", d.Step, d.Seq)
		if d.Text != "" {
			out += " text=" + strconv.Quote(d.Text)
		}
		for _, c := range d.ToolCalls {
			out += fmt.Sprintf(" call[%d]", c.Index)
			if c.Name != "" {
				out += "=" + c.Name
			}
			out += " args+=" + strconv.Quote(c.Arguments)
		}
		return out
	case events.ModelResponse:
		if len(d.ToolCallIDs) > 0 {
			return fmt.Sprintf("model=%s calls=%v", d.Model, d.ToolCallIDs)
		}
		return fmt.Sprintf("model=%s finish=%s", d.Model, d.FinishReason)
	case events.ToolRequested:
		if p.tools == nil {
			p.tools = map[string]string{}
		}
		p.tools[ev.ToolCallID] = d.Tool
		return fmt.Sprintf("%-13s%s args=%s", d.Tool, call, compact(d.Args()))
	case events.ToolStarted:
		return fmt.Sprintf("%-13s%s attempt=%d", d.Tool, call, d.Attempt)
	case events.ToolRetried:
		return fmt.Sprintf("%-13s%s attempt=%d kind=%s", d.Tool, call, d.Attempt, d.Error.Kind)
	case events.ToolReturned:
		var ret toolsets.Return
		kind := "?"
		if json.Unmarshal(d.Return, &ret) == nil {
			kind = string(ret.Kind)
		}
		return fmt.Sprintf("%-13s%s kind=%s", d.Tool, call, kind)
	case events.ApprovalRequested:
		return fmt.Sprintf("%-13s%s reason=%q", d.Tool, call, d.Reason)
	case events.ApprovalDecided:
		if d.Approved {
			return fmt.Sprintf("%-13s%s approved by %s", p.tools[ev.ToolCallID], call, d.By)
		}
		return fmt.Sprintf("%-13s%s denied by %s: %s", p.tools[ev.ToolCallID], call, d.By, d.Reason)
	case events.RunWaiting:
		return fmt.Sprintf("reason=%s calls=%v", d.Reason, d.ToolCallIDs)
	case events.RunResumed:
		return fmt.Sprintf("calls=%v", d.ToolCallIDs)
	case events.RunCompleted:
		var text string
		if json.Unmarshal(d.Output, &text) == nil {
			return fmt.Sprintf("output=%q", text)
		}
		return "output=" + compact(d.Output)
	case events.RunFailed:
		return fmt.Sprintf("kind=%s: %s", d.Error.Kind, d.Error.Message)
	case events.RunCancelled:
		return fmt.Sprintf("by=%s: %s", d.By, d.Reason)
	case events.UsageSnapshot:
		return fmt.Sprintf("scope=%s %s", d.Scope, formatUsage(d.Usage))
	}
	return ""
}

// compact returns raw JSON on one line (or as given if it is not JSON).
func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

func formatUsage(u events.Usage) string {
	return fmt.Sprintf("requests=%d input_tokens=%d output_tokens=%d tool_calls=%d", u.Requests, u.InputTokens, u.OutputTokens, u.ToolCalls)
}

// The demo's tools (from the seeds): lookup and fetch_ticket are
// independent and run in parallel; deploy changes production and needs an
// approval (the agent's approval policy names it).
type (
	lookupArgs struct {
		TicketID string `json:"ticket_id" jsonschema:"the ticket to look up"`
	}
	fetchArgs struct {
		TicketID       string `json:"ticket_id" jsonschema:"the ticket to fetch"`
		IncludeHistory bool   `json:"include_history,omitempty"`
	}
	ticket struct {
		TicketID string   `json:"ticket_id"`
		FixedIn  string   `json:"fixed_in"`
		History  []string `json:"history,omitempty"`
	}
	deployArgs struct {
		Release     string `json:"release" jsonschema:"the release to deploy"`
		Environment string `json:"environment" jsonschema:"where to deploy it"`
	}
)

// toolLatency is how long lookup and fetch_ticket take, long enough that
// the events show them running at the same time.
const toolLatency = 25 * time.Millisecond

func pause(ctx context.Context) error {
	t := time.NewTimer(toolLatency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// demoAgentConfig is the support agent: its tools, its approval policy
// and its model.
func demoAgentConfig() (weft.AgentConfig, error) {
	lookup, err := toolsets.NewFunc("lookup", func(ctx context.Context, a lookupArgs) (map[string]string, error) {
		if err := pause(ctx); err != nil {
			return nil, err
		}
		return map[string]string{"ticket_id": a.TicketID, "title": "Login fails after upgrade", "status": "open"}, nil
	}, toolsets.WithDescription("Look up a ticket."))
	if err != nil {
		return weft.AgentConfig{}, err
	}
	fetch, err := toolsets.NewFunc("fetch_ticket", func(ctx context.Context, a fetchArgs) (ticket, error) {
		if err := pause(ctx); err != nil {
			return ticket{}, err
		}
		t := ticket{TicketID: a.TicketID, FixedIn: "v1.4.2"}
		if a.IncludeHistory {
			t.History = []string{"reported", "fixed in v1.4.2"}
		}
		return t, nil
	}, toolsets.WithDescription("Fetch a support ticket."))
	if err != nil {
		return weft.AgentConfig{}, err
	}
	deploy, err := toolsets.NewFunc("deploy", func(_ context.Context, a deployArgs) (map[string]any, error) {
		return map[string]any{"release": a.Release, "environment": a.Environment, "deployed": true}, nil
	}, toolsets.WithDescription("Deploy a release."))
	if err != nil {
		return weft.AgentConfig{}, err
	}
	return weft.AgentConfig{
		Model:                 llm.Func(demoModel),
		Tools:                 []toolsets.Tool{lookup, fetch, deploy},
		Instructions:          []string{"You fix support tickets: find the release with the fix, then deploy it."},
		ApprovalRequiredTools: []string{"deploy"},
	}, nil
}

// demoModel decides each response from the last tool returns, so the run is
// deterministic: first lookup and fetch_ticket in one response, then deploy
// of the release fetch_ticket named, then a final text saying whether the
// deploy happened.
func demoModel(_ context.Context, req *llm.Request) (*llm.Response, error) {
	last, _ := req.LastMessage()
	if rp := last.RetryPrompts(); len(rp) > 0 {
		return nil, fmt.Errorf("demo model: unexpected retry prompt for %s", rp[0].Name)
	}
	returns := map[string]llm.ToolReturn{}
	for _, r := range last.ToolReturns() {
		returns[r.Name] = r
	}
	if d, ok := returns["deploy"]; ok {
		// A success is the deploy's JSON object; a denial (or an error)
		// is a text saying why nothing was deployed.
		var done deployArgs
		if d.IsError || json.Unmarshal(d.Content, &done) != nil || done.Release == "" {
			return &llm.Response{Text: fmt.Sprintf("Ticket %s: the fix is not deployed. %s", demoTicket, d.ContentText())}, nil
		}
		return &llm.Response{Text: fmt.Sprintf("Ticket %s is fixed: %s is deployed to %s.", demoTicket, done.Release, done.Environment)}, nil
	}
	if f, ok := returns["fetch_ticket"]; ok {
		var t ticket
		if err := json.Unmarshal(f.Content, &t); err != nil || f.IsError {
			return nil, fmt.Errorf("demo model: fetch_ticket returned %s", f.Content)
		}
		args, err := json.Marshal(deployArgs{Release: t.FixedIn, Environment: "production"})
		if err != nil {
			return nil, err
		}
		return &llm.Response{ToolCalls: []llm.ToolCall{{ID: "call_deploy", Name: "deploy", Arguments: args}}}, nil
	}
	return &llm.Response{ToolCalls: []llm.ToolCall{
		{ID: "call_lookup", Name: "lookup", Arguments: json.RawMessage(`{"ticket_id":"` + demoTicket + `"}`)},
		{ID: "call_fetch", Name: "fetch_ticket", Arguments: json.RawMessage(`{"ticket_id":"` + demoTicket + `","include_history":true}`)},
	}}, nil
}
