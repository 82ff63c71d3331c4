// Package replay checks that a recorded session is reproducible: it re-runs
// the session on a fresh in-memory runtime against the recorded model
// responses and tool returns, replays the recorded approvals and deferred
// results, and compares the new event stream with the recorded one.
//
// It uses only the public facade (weft.Start with a memstore, NewAgent,
// sessions, Resume). The model is an llm.Func that answers each request with
// the next recorded model.response; each tool is rebuilt by name and answers
// a call with the recorded outcome of the call with the same id: the
// recorded return's content, or the approval request or deferral it raised
// (with the recorded reason and metadata). Toolsets are rebuilt from
// toolset.initialized (name, id and tools).
//
// # What is compared
//
// Each event is compared by its type, its tool-call id, and its data, after
// normalising both sides the same way:
//
//   - every UUID (event, run and session ids, wherever they appear in the
//     envelope or the data) is replaced by its first-seen ordinal on its
//     side, so the n-th new id must be used where the n-th recorded id was;
//   - event ids, times, positions, versions and hash links are not compared
//     (versions are implied by the order);
//   - the "model" field of model.request data (the Go type of the model
//     that answered) is dropped;
//   - within a block of consecutive tool.started, tool.retried,
//     tool.progress and tool.returned events, events are ordered by tool-call
//     id (keeping each call's order), because parallel calls finish in any
//     order.
//
// The first event that differs, or the first one missing on either side,
// is the divergence. Refused resumes (decision.refused) are neither
// replayed nor compared: they changed nothing, and one sent while no run
// waited cannot be sent again through the facade; the events around them
// are compared as if they were not there.
//
// Limits: tool errors are replayed as errors carrying the recorded
// content's text, so a tool whose error return carried structured content
// may diverge; streaming, cancellation, toolset refreshes and tool search
// are not replayed.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/toolsets"
)

// ErrDiverged matches every *Divergence.
var ErrDiverged = errors.New("replay: diverged from the recording")

// ErrUnreplayable: the recording cannot be replayed (no run, several
// sessions, a run shape the replay does not drive).
var ErrUnreplayable = errors.New("replay: recording cannot be replayed")

// Divergence is the first event at which the replay differs from the
// recording. It matches ErrDiverged with errors.Is.
type Divergence struct {
	// Version is the recorded event's version (or, when the recording
	// ended first, the version the extra replayed event got).
	Version uint64 `json:"version"`
	// ExpectedType and GotType are the two events' types ("" when one
	// side has no event there).
	ExpectedType events.Type `json:"expected_type"`
	GotType      events.Type `json:"got_type"`
	// Expected and Got are the normalised events compared.
	Expected string `json:"expected"`
	Got      string `json:"got"`
}

func (d *Divergence) Error() string {
	return fmt.Sprintf("replay diverges at version %d: expected %s %s, got %s %s", d.Version, d.ExpectedType, d.Expected, d.GotType, d.Got)
}

// Is reports whether target is ErrDiverged.
func (d *Divergence) Is(target error) bool { return target == ErrDiverged }

// Check re-runs the session recorded in evs (the events of one session
// stream, in version order) and compares the result. It returns nil when
// the replay produced the same events, a *Divergence naming the first
// difference, or another error when the replay could not run.
func Check(ctx context.Context, evs []events.Event) error {
	rec, err := parse(evs)
	if err != nil {
		return err
	}
	tools, err := rec.looseTools()
	if err != nil {
		return err
	}
	sets, err := rec.toolsets()
	if err != nil {
		return err
	}
	store := memstore.New()
	defer store.Close()
	rt, err := weft.Start(ctx, weft.Config{Store: store})
	if err != nil {
		return fmt.Errorf("replay: start a runtime: %w", err)
	}
	defer rt.Close()
	agent, err := rt.NewAgent(rec.agent, weft.AgentConfig{Model: rec.model(), Tools: tools, Toolsets: sets, ApprovalRequiredTools: rec.policy})
	if err != nil {
		return fmt.Errorf("replay: %w: agent: %v", ErrUnreplayable, err)
	}
	sess := agent.NewSession()
	for _, run := range rec.runs {
		res, err := sess.Run(ctx, run.prompt)
		for i := 0; err == nil && res.Status == weft.StatusWaiting; i++ {
			if i >= len(run.resumes) {
				break // the recording ends waiting
			}
			res, err = sess.Resume(ctx, run.resumes[i]...)
		}
		if err != nil {
			break // the comparison says where it went wrong
		}
	}
	got, err := store.ReadStream(ctx, events.SessionStream(sess.ID()), 0)
	if err != nil {
		return fmt.Errorf("replay: read the replayed session: %w", err)
	}
	return compare(evs, got)
}

// call is what the recording says about one tool call.
type call struct {
	tool           string
	content        json.RawMessage // the final return's content
	isError        bool
	approval       *events.ApprovalRequested
	deferredReason string
	deferredMeta   json.RawMessage
	deferred       bool
}

// run is one recorded run: its prompt and the decisions of each resume.
type run struct {
	prompt  string
	resumes [][]weft.Decision
}

type recording struct {
	agent     string
	responses []events.ModelResponse
	calls     map[string]*call
	sets      []events.ToolsetInitialized
	tools     []string // loose tool names, in the order of the first request
	runs      []*run
	// policy holds the tools whose approvals the agent's policy raised
	// before the tool ran (an approval_required return with no attempt);
	// the replayed agent gets them as ApprovalRequiredTools.
	policy []string

	mu   sync.Mutex
	next int
}

// returnEnvelope is the part of a canonical tool return the replay needs.
type returnEnvelope struct {
	Kind     string          `json:"kind"`
	IsError  bool            `json:"is_error"`
	Content  json.RawMessage `json:"content"`
	Attempts int             `json:"attempts"`
	Control  *struct {
		Reason string `json:"reason"`
	} `json:"control"`
}

// failedDetails are the details of a deferred call failed with them (the
// content {"error","details"} weft.FailWith gives).
type failedDetails struct {
	Error   string          `json:"error"`
	Details json.RawMessage `json:"details"`
}

func parse(evs []events.Event) (*recording, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrUnreplayable, fmt.Sprintf(format, args...))
	}
	if len(evs) == 0 {
		return nil, bad("no events")
	}
	r := &recording{calls: map[string]*call{}}
	get := func(id string) *call {
		c := r.calls[id]
		if c == nil {
			c = &call{}
			r.calls[id] = c
		}
		return c
	}
	var (
		cur      *run
		decision []weft.Decision
		inTools  = map[string]bool{}
	)
	for _, ev := range evs {
		if ev.Stream != evs[0].Stream {
			return nil, bad("events of two streams, %q and %q", evs[0].Stream, ev.Stream)
		}
		data, err := events.Decode(ev)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		switch d := data.(type) {
		case events.RunStarted:
			if r.agent == "" {
				r.agent = d.Agent
			}
			var prompt string
			if err := json.Unmarshal(d.Input, &prompt); err != nil {
				return nil, bad("run %s: input is not a text prompt", ev.RunID)
			}
			cur = &run{prompt: prompt}
			r.runs = append(r.runs, cur)
		case events.ModelRequest:
			if len(r.responses) == 0 && r.tools == nil {
				r.tools = []string{}
				for _, name := range d.Tools {
					if !inTools[name] {
						r.tools = append(r.tools, name)
					}
				}
			}
		case events.ModelResponse:
			r.responses = append(r.responses, d)
		case events.ToolsetInitialized:
			r.sets = append(r.sets, d)
			for _, n := range d.Tools {
				inTools[n] = true
			}
		case events.ToolRequested:
			get(ev.ToolCallID).tool = d.Tool
		case events.ToolReturned:
			var env returnEnvelope
			if err := json.Unmarshal(d.Return, &env); err != nil {
				return nil, bad("tool return of %s: %v", ev.ToolCallID, err)
			}
			c := get(ev.ToolCallID)
			c.tool = d.Tool
			if env.Kind == "call_deferred" {
				var reason string
				_ = json.Unmarshal(env.Content, &reason)
				c.deferredReason = strings.TrimPrefix(reason, "call deferred: ")
				c.deferred = true
			} else if env.Kind != "approval_required" {
				c.content, c.isError = env.Content, env.IsError
			} else if env.Attempts == 0 && !slices.Contains(r.policy, d.Tool) {
				r.policy = append(r.policy, d.Tool)
			}
		case events.ApprovalRequested:
			get(ev.ToolCallID).approval = &d
		case events.DeferredRequested:
			get(ev.ToolCallID).deferredMeta = d.Metadata
		case events.ApprovalDecided:
			if d.Approved {
				decision = append(decision, weft.Approve(ev.ToolCallID, d.By, d.Arguments))
			} else {
				decision = append(decision, weft.Deny(ev.ToolCallID, d.By, d.Reason))
			}
		case events.DeferredResolved:
			var env returnEnvelope
			if err := json.Unmarshal(d.Return, &env); err != nil {
				return nil, bad("deferred result of %s: %v", ev.ToolCallID, err)
			}
			if env.IsError {
				// The decision's reason is the control's; details, when
				// the failure had them, are in the content.
				var reason string
				if env.Control != nil {
					reason = env.Control.Reason
				}
				var fd failedDetails
				if json.Unmarshal(env.Content, &fd) == nil && fd.Details != nil {
					decision = append(decision, weft.FailWith(ev.ToolCallID, d.By, reason, fd.Details))
				} else {
					decision = append(decision, weft.Fail(ev.ToolCallID, d.By, reason))
				}
			} else {
				decision = append(decision, weft.Complete(ev.ToolCallID, d.By, env.Content))
			}
		case events.RunResumed:
			if cur == nil {
				return nil, bad("run.resumed before run.started")
			}
			cur.resumes = append(cur.resumes, decision)
			decision = nil
		}
	}
	if len(r.runs) == 0 {
		return nil, bad("no run.started")
	}
	return r, nil
}

// model answers each request with the next recorded response.
func (r *recording) model() llm.Model {
	return llm.Func(func(_ context.Context, _ *llm.Request) (*llm.Response, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.next >= len(r.responses) {
			return nil, fmt.Errorf("replay: request %d: the recording has only %d model responses", r.next+1, len(r.responses))
		}
		rec := r.responses[r.next]
		r.next++
		var msg llm.Message
		if err := json.Unmarshal(rec.Message, &msg); err != nil {
			return nil, fmt.Errorf("replay: recorded response %d: %w", r.next, err)
		}
		resp := &llm.Response{Model: rec.Model, FinishReason: llm.FinishReason(rec.FinishReason), ToolCalls: msg.ToolCalls()}
		for _, p := range msg.Parts {
			if t, ok := p.(llm.Text); ok {
				resp.Text += t.Text
			}
		}
		if rec.Usage != nil {
			resp.Usage = llm.Usage{InputTokens: rec.Usage.InputTokens, OutputTokens: rec.Usage.OutputTokens, Requests: rec.Usage.Requests}
		}
		return resp, nil
	})
}

// tool rebuilds the tool called name. Its arguments are any JSON object:
// the recorded calls were checked against the original schema already.
func (r *recording) tool(name string) (toolsets.Tool, error) {
	tl, err := toolsets.NewContextFunc(name, func(_ context.Context, tc *toolsets.ToolContext, _ map[string]any) (json.RawMessage, error) {
		c := r.calls[tc.CallID]
		switch {
		case c == nil:
			return nil, fmt.Errorf("replay: the recording has no call %s of %s", tc.CallID, name)
		case c.approval != nil && tc.Approval == nil:
			return nil, toolsets.ApprovalRequired(c.approval.Reason, object(c.approval.Metadata))
		case c.deferred && tc.Deferred == nil:
			return nil, toolsets.CallDeferred(c.deferredReason, object(c.deferredMeta))
		case c.isError:
			var text string
			if json.Unmarshal(c.content, &text) != nil {
				text = string(c.content)
			}
			return nil, errors.New(text)
		}
		return c.content, nil
	}, toolsets.WithSchema(json.RawMessage(`{"type":"object"}`)))
	if err != nil {
		return nil, fmt.Errorf("replay: %w: tool %q: %v", ErrUnreplayable, name, err)
	}
	return tl, nil
}

// object decodes a JSON object (nil for none).
func object(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func (r *recording) looseTools() ([]toolsets.Tool, error) {
	out := make([]toolsets.Tool, 0, len(r.tools))
	for _, n := range r.tools {
		tl, err := r.tool(n)
		if err != nil {
			return nil, err
		}
		out = append(out, tl)
	}
	return out, nil
}

func (r *recording) toolsets() ([]toolsets.Toolset, error) {
	var out []toolsets.Toolset
	seen := map[string]bool{}
	for _, d := range r.sets {
		if seen[d.Toolset] {
			continue
		}
		seen[d.Toolset] = true
		tools := make([]toolsets.Tool, 0, len(d.Tools))
		for _, n := range d.Tools {
			tl, err := r.tool(n)
			if err != nil {
				return nil, err
			}
			tools = append(tools, tl)
		}
		var opts []toolsets.Option
		if d.ID != "" {
			opts = append(opts, toolsets.WithID(d.ID))
		}
		ts, err := toolsets.New(d.Toolset, tools, opts...)
		if err != nil {
			return nil, fmt.Errorf("replay: %w: toolset %q: %v", ErrUnreplayable, d.Toolset, err)
		}
		out = append(out, ts)
	}
	return out, nil
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normal is one event as compared.
type normal struct {
	version uint64
	typ     events.Type
	call    string
	text    string
}

// normalize returns evs as compared (see the package documentation).
func normalize(evs []events.Event) []normal {
	ids := map[string]string{}
	ord := func(s string) string {
		return uuidRE.ReplaceAllStringFunc(s, func(u string) string {
			if _, ok := ids[u]; !ok {
				ids[u] = fmt.Sprintf("<id%d>", len(ids)+1)
			}
			return ids[u]
		})
	}
	out := make([]normal, len(evs))
	for i, ev := range evs {
		data := ev.Data
		if ev.Type == events.TypeModelRequest {
			var m map[string]json.RawMessage
			if json.Unmarshal(data, &m) == nil {
				delete(m, "model")
				data, _ = json.Marshal(m)
			}
		}
		var buf bytes.Buffer
		if json.Compact(&buf, data) != nil {
			buf.Reset()
			buf.Write(data)
		}
		text := fmt.Sprintf("session=%s run=%s call=%s data=%s", ev.SessionID, ev.RunID, ev.ToolCallID, buf.String())
		out[i] = normal{version: ev.Version, typ: ev.Type, call: ev.ToolCallID, text: ord(text)}
	}
	// Parallel tool events: order each block by call id.
	toolEvent := func(t events.Type) bool {
		return t == events.TypeToolStarted || t == events.TypeToolRetried || t == events.TypeToolProgress || t == events.TypeToolReturned
	}
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && toolEvent(out[j].typ) {
			j++
		}
		if j > i {
			versions := make([]uint64, j-i)
			for k := range versions {
				versions[k] = out[i+k].version
			}
			slices.SortStableFunc(out[i:j], func(a, b normal) int { return strings.Compare(a.call, b.call) })
			for k := range versions {
				out[i+k].version = versions[k]
			}
			i = j
		} else {
			i++
		}
	}
	return out
}

// compare returns the first divergence of got from want, or nil.
// Refused resumes (decision.refused) are left out on both sides.
func compare(want, got []events.Event) error {
	w, g := normalize(withoutRefusals(want)), normalize(withoutRefusals(got))
	for i := range max(len(w), len(g)) {
		var a, b normal
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a.typ == b.typ && a.text == b.text {
			continue
		}
		v := a.version
		if i >= len(w) {
			v = b.version
		}
		return &Divergence{Version: v, ExpectedType: a.typ, GotType: b.typ, Expected: a.text, Got: b.text}
	}
	return nil
}

// withoutRefusals returns evs without their decision.refused events.
func withoutRefusals(evs []events.Event) []events.Event {
	return slices.DeleteFunc(slices.Clone(evs), func(ev events.Event) bool { return ev.Type == events.TypeDecisionRefused })
}
