package simtests

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/jetstream"
)

// The demo agent of weft serve and the approval its run waits for.
const (
	demoAgent    = "support"
	demoPrompt   = "Ticket T-7: find the release that fixes it and deploy it."
	demoApproval = "call_deploy"
)

// client talks to the cluster as a user process would: commands over NATS
// (retried the way the Ownership rules ask callers to), the event log read
// from JetStream, the lease bucket read from its KV.
type client struct {
	t     *testing.T
	nc    *nats.Conn
	store *jetstream.Store
	kv    natsjs.KeyValue
}

// newClient connects to every server of c; weft nodes must have started
// (they create the event stream and the lease bucket).
func (h *harness) newClient(c *cluster) *client {
	h.t.Helper()
	nc, err := bus.Connect(h.ctx, c.urls(), bus.WithName("simtests-client"))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(nc.Close)
	// The same stream configuration as the nodes' (three replicas): the
	// store creates or updates the stream.
	store, err := jetstream.New(h.ctx, nc, jetstream.WithReplicas(3))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = store.Close() })
	js, err := natsjs.New(nc)
	if err != nil {
		h.t.Fatal(err)
	}
	kv, err := js.KeyValue(h.ctx, "weft_leases")
	if err != nil {
		h.t.Fatalf("the lease bucket: %v", err)
	}
	return &client{t: h.t, nc: nc, store: store, kv: kv}
}

// command sends verb with body to session, retrying while no node answers,
// the request times out, the answering node no longer owns the session or
// fails internally (JetStream unavailable while a server restarts), until
// ctx ends. A refusal is returned as the *actors.CommandError.
func (c *client) command(ctx context.Context, session, verb string, body any) (actors.CommandReply, error) {
	subject, err := bus.Default.Command(session, verb)
	if err != nil {
		return actors.CommandReply{}, err
	}
	return c.commandOn(ctx, subject, session, verb, body)
}

// commandOn is command sent on subject: the cluster's command subject of
// session, or that of one node (bus.Subjects.NodeCommand), which takes a
// session nobody holds and answers session_owned for one another node
// holds.
func (c *client) commandOn(ctx context.Context, subject, session, verb string, body any) (actors.CommandReply, error) {
	var reply actors.CommandReply
	data, err := json.Marshal(body)
	if err != nil {
		return reply, err
	}
	err = retry(ctx, func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		msg, err := c.nc.RequestWithContext(rctx, subject, data)
		if err != nil {
			return err
		}
		reply = actors.CommandReply{}
		if err := json.Unmarshal(msg.Data, &reply); err != nil {
			return fmt.Errorf("reply %q: %w", msg.Data, err)
		}
		if reply.Error != nil && (errors.Is(reply.Error, actors.ErrSessionOwned) || errors.Is(reply.Error, actors.ErrInternal)) {
			c.t.Logf("%s %s: %v (retrying)", verb, session, reply.Error)
			return reply.Error
		}
		return nil
	})
	if err != nil {
		return reply, fmt.Errorf("%s %s: %w", verb, session, err)
	}
	if reply.Error != nil {
		return reply, reply.Error
	}
	return reply, nil
}

// runID is the id of the tests' single run of session.
func runID(session string) string { return session + "-run" }

// startRun starts the demo run in session (a start is idempotent, so a
// retried one is safe) and returns the session's version the node
// reported.
func (c *client) startRun(ctx context.Context, session string) (uint64, error) {
	r, err := c.command(ctx, session, actors.VerbStart, actors.StartCommand{RunID: runID(session), Agent: demoAgent, Prompt: demoPrompt})
	return r.Version, err
}

// startRunOn starts the demo run in session on weft node node: the command
// goes to that node's command subject, so that the node takes the session
// (a new one) and drives its run. It returns the session's version the
// node reported.
func (c *client) startRunOn(ctx context.Context, node, session string) (uint64, error) {
	subject, err := bus.Default.NodeCommand(node, session, actors.VerbStart)
	if err != nil {
		return 0, err
	}
	r, err := c.commandOn(ctx, subject, session, actors.VerbStart, actors.StartCommand{RunID: runID(session), Agent: demoAgent, Prompt: demoPrompt})
	return r.Version, err
}

// approve approves the deploy the run of session waits for. A resume whose
// reply was lost (its node died after appending it) is retried and then
// refused as already decided (or not waiting): that counts when the log
// holds the decision.
// It returns the session's version the node reported (or that of the
// decision).
func (c *client) approve(ctx context.Context, session string) (uint64, error) {
	cmd := actors.ResumeCommand{RunID: runID(session), Decisions: []actors.Decision{{ID: demoApproval, Action: actors.ActionApprove, By: "simtests"}}}
	r, err := c.command(ctx, session, actors.VerbResume, cmd)
	if errors.Is(err, actors.ErrAlreadyDecided) || errors.Is(err, actors.ErrNotWaiting) || errors.Is(err, actors.ErrRunEnded) {
		evs, rerr := c.read(ctx, session)
		if rerr != nil {
			return 0, rerr
		}
		for _, ev := range evs {
			if ev.Type == events.TypeApprovalDecided && ev.ToolCallID == demoApproval {
				return ev.Version, nil
			}
		}
	}
	return r.Version, err
}

// read returns the events of session's stream.
func (c *client) read(ctx context.Context, session string) ([]events.Event, error) {
	return c.store.ReadStream(ctx, events.SessionStream(session), 0)
}

// settled returns the type of the last run.* event that settles session's
// run ("" while it runs or before it started).
func settled(evs []events.Event) events.Type {
	var last events.Type
	for _, ev := range evs {
		switch ev.Type {
		case events.TypeRunWaiting, events.TypeRunCompleted, events.TypeRunFailed, events.TypeRunCancelled:
			last = ev.Type
		case events.TypeRunStarted, events.TypeRunResumed:
			last = ""
		}
	}
	return last
}

// await polls session's stream until its run settles as want, and returns
// its events; a run that settles otherwise is an error. The stream is
// judged once it holds version since (a read may be served by a
// replica that lags behind the command's append).
func (c *client) await(ctx context.Context, session string, want events.Type, since uint64) ([]events.Event, error) {
	var evs []events.Event
	err := retry(ctx, func(ctx context.Context) error {
		var err error
		if evs, err = c.read(ctx, session); err != nil {
			return err
		}
		if uint64(len(evs)) < since {
			return fmt.Errorf("session %s: %d events, the node reported version %d", session, len(evs), since)
		}
		switch got := settled(evs); got {
		case want:
			return nil
		case "":
			return fmt.Errorf("session %s: the run has not settled (%d events)", session, len(evs))
		default:
			return backoffStop{fmt.Errorf("session %s: the run settled as %s, want %s %s)", session, got, want, describe(evs))}
		}
	})
	var stop backoffStop
	if errors.As(err, &stop) {
		return evs, stop.err
	}
	return evs, err
}

// backoffStop is an error that retry should not retry; await unwraps it.
type backoffStop struct{ err error }

func (b backoffStop) Error() string { return b.err.Error() }

// owner returns the node holding session's lease ("" when none does).
func (c *client) owner(ctx context.Context, session string) (string, error) {
	e, err := c.kv.Get(ctx, base64.RawURLEncoding.EncodeToString([]byte(session)))
	if errors.Is(err, natsjs.ErrKeyNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var v struct {
		Node string `json:"node"`
	}
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return "", fmt.Errorf("lease of %s: %q: %w", session, e.Value(), err)
	}
	return v.Node, nil
}

// checkLog checks the stream of each session: versions 1..n, unique event
// ids, one run.started and at most one event ending each run, the hash
// chain verifies, and every event in before (read earlier and so
// acknowledged) is still there, unchanged.
func (c *client) checkLog(ctx context.Context, sessions []string, before map[string][]events.Event) {
	c.t.Helper()
	for _, s := range sessions {
		evs, err := c.read(ctx, s)
		if err != nil {
			c.t.Errorf("read %s: %v", s, err)
			continue
		}
		if err := checkStream(evs); err != nil {
			c.t.Errorf("session %s: %v", s, err)
		}
		for i, old := range before[s] {
			if i >= len(evs) || evs[i].ID != old.ID || evs[i].Type != old.Type {
				c.t.Errorf("session %s: acknowledged event %d (%s %s) is lost", s, old.Version, old.ID, old.Type)
				break
			}
		}
	}
}

// checkStream checks one stream's events (see checkLog).
func checkStream(evs []events.Event) error {
	ids := map[uuid.UUID]bool{}
	started, ended := map[string]int{}, map[string]int{}
	for i, ev := range evs {
		if ev.Version != uint64(i+1) {
			return fmt.Errorf("event %d has version %d", i+1, ev.Version)
		}
		if ids[ev.ID] {
			return fmt.Errorf("event id %s appears twice", ev.ID)
		}
		ids[ev.ID] = true
		switch ev.Type {
		case events.TypeRunStarted:
			started[ev.RunID]++
		case events.TypeRunCompleted, events.TypeRunFailed, events.TypeRunCancelled:
			ended[ev.RunID]++
		}
	}
	for run, n := range started {
		if n != 1 {
			return fmt.Errorf("run %s started %d times", run, n)
		}
	}
	for run, n := range ended {
		if n != 1 || started[run] != 1 {
			return fmt.Errorf("run %s ended %d times (started %d)", run, n, started[run])
		}
	}
	if cerr := events.VerifyChain(evs); cerr != nil {
		return fmt.Errorf("audit chain: %w", cerr)
	}
	return nil
}

// describe lists evs in a line each (for failure messages).
func describe(evs []events.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "\n  %d %s call=%s %s", ev.Version, ev.Type, ev.ToolCallID, ev.Data)
	}
	return b.String()
}
