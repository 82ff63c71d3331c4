package actors

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/toolsets"
)

// command decides on a command of verb whose body (a StartCommand,
// ResumeCommand or CancelCommand) decoded with derr. held: a resume that
// was held once already for its run's tools (see effHold). A carried-out
// command is answered with its run once its events are appended, and the
// run carries on; a refused one is answered with its *CommandError.
func (k core) command(verb string, body any, derr error, held bool) decision {
	refuse := func(sentinel error, format string, args ...any) decision {
		return decision{effects: one(effReply{err: commandError(verb, k.session, sentinel, format, args...)})}
	}
	switch verb {
	case VerbStart:
		b, _ := body.(StartCommand)
		if derr != nil || b.RunID == "" {
			return refuse(ErrBadCommand, "start needs a run_id, an agent and a prompt")
		}
		return k.start(b)
	case VerbResume:
		if derr != nil {
			return refuse(ErrBadCommand, "decode resume: %v", derr)
		}
		b, _ := body.(ResumeCommand)
		if d, ok := k.hold(b, held); ok {
			return d
		}
		return k.resume(b)
	case VerbCancel:
		if derr != nil {
			return refuse(ErrBadCommand, "decode cancel: %v", derr)
		}
		b, _ := body.(CancelCommand)
		return k.cancel(b)
	}
	return refuse(ErrBadCommand, "unknown verb %q", verb)
}

// carriedOut is the decision that appends recs and then answers with run.
func carriedOut(run string, recs ...record) decision {
	return decision{recs: recs, effects: one(effReply{runID: run}), carryOn: true}
}

// refused is the decision that answers err (nothing is appended).
func refused(err error) decision {
	return decision{effects: one(effReply{err: err})}
}

// start starts run b.RunID, unless the session has it (a retried start is
// answered as done; another start with its id is refused) or another run
// is active, or the agent is unknown.
func (k core) start(b StartCommand) decision {
	if r := k.st.Run(b.RunID); r != nil {
		if r.Agent == b.Agent && r.Prompt == b.Prompt {
			return carriedOut(r.ID) // a retried start: already done
		}
		return refused(commandError(VerbStart, k.session, ErrBadCommand, "run %q exists", b.RunID))
	}
	spec, ok := k.look.Agent(b.Agent)
	if !ok {
		return refused(commandError(VerbStart, k.session, ErrUnknownAgent, "agent %q is not registered", b.Agent))
	}
	// The run is driven by the version it records: the one the start
	// names (a handle of an earlier version), else the latest.
	meta := b.Metadata
	if v, named := meta[MetaAgentVersion]; named {
		s, _ := v.(string)
		if _, ok := k.look.AgentVersion(b.Agent, s); !ok || s == "" {
			return refused(commandError(VerbStart, k.session, ErrUnknownAgent, "agent %q has no version %v", b.Agent, v))
		}
	} else if spec.Version != "" {
		meta = maps.Clone(meta)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[MetaAgentVersion] = spec.Version
	}
	if k.st.Active != "" {
		return refused(commandError(VerbStart, k.session, ErrSessionBusy, "run %q is %s", k.st.Active, k.st.ActiveRun().Status))
	}
	input, _ := json.Marshal(b.Prompt)
	var rawMeta json.RawMessage
	if len(meta) > 0 {
		mb, err := json.Marshal(meta)
		if err != nil {
			return refused(commandError(VerbStart, k.session, ErrBadCommand, "metadata: %v", err))
		}
		rawMeta = mb
	}
	started := events.RunStarted{Agent: b.Agent, Input: input, Metadata: rawMeta}
	parentOf(meta).fill(&started)
	rec := newRecord(events.TypeRunStarted, k.session, b.RunID, "", started)
	rec.extra = b.Prompt
	return carriedOut(b.RunID, rec)
}

// resume carries out a resume command: it records the decisions and
// resumes the run (which prepares its toolsets again), or refuses the
// command with a *CommandError and records the refusal as
// decision.refused (the refused command changes nothing else). When the
// refusal cannot be recorded, the append's error answers instead (the
// caller retries, and the retried command is refused and recorded then).
func (k core) resume(b ResumeCommand) decision {
	r := k.resumeTarget(b)
	evs, err := decide(k.session, r, b, k.argumentsCheck(r))
	var ce *CommandError
	switch {
	case errors.As(err, &ce):
		return decision{recs: []record{refusalRecord(k.session, r, b, ce)}, effects: one(effReply{err: err})}
	case err != nil:
		return refused(err)
	}
	d := carriedOut(r.ID, evs...)
	if k.f.run != "" {
		f := k.f
		f.prep, f.last = nil, nil // a resumed run re-prepares its toolsets
		d = d.with(f)
	}
	return d
}

// resumeTarget is the run a resume names: b.RunID, or the active run.
func (k core) resumeTarget(b ResumeCommand) *RunState {
	if b.RunID == "" {
		return k.st.ActiveRun()
	}
	return k.st.Run(b.RunID)
}

// argumentsCheck returns the check of reviewed arguments against the
// schemas of run r's tools, nil when r's tools are not prepared in this
// process.
func (k core) argumentsCheck(r *RunState) func(tool string, args json.RawMessage) error {
	if r != nil && k.f.run == r.ID && k.f.prep != nil {
		return k.f.prep.Registry.CheckArguments
	}
	return nil
}

// hold holds a resume whose reviewed arguments must be checked against
// the tools' schemas while its run's tools are not prepared in this
// process (after a restart or a takeover): the resume waits for their
// preparation and is then decided again, once. Other commands, and a
// resume held once already, are not held.
func (k core) hold(b ResumeCommand, held bool) (decision, bool) {
	r := k.resumeTarget(b)
	reviewed := slices.ContainsFunc(b.Decisions, func(d Decision) bool { return d.Action == ActionApprove && len(d.Arguments) > 0 })
	if held || !reviewed || r == nil || r.Status != StatusWaiting || k.argumentsCheck(r) != nil {
		return decision{}, false
	}
	if _, ok := k.look.AgentVersion(r.Agent, runVersion(r)); !ok {
		return decision{}, false // resume refuses it: no tools to check against
	}
	d := decision{effects: one(effHold{})}
	if k.f.run != r.ID || !k.f.preparing {
		d.effects = d.effects.add(effPrepare{run: r.ID, step: r.Step})
	}
	return d, true
}

// cancel cancels a run (b.RunID, or the active one) that has not ended:
// every dangling call of its batch is closed with a cancelled return, so
// that the history stays valid, and run.cancelled is recorded, in one
// append.
func (k core) cancel(b CancelCommand) decision {
	r := k.st.Run(b.RunID)
	if b.RunID == "" {
		r = k.st.ActiveRun()
	}
	if r == nil {
		return refused(commandError(VerbCancel, k.session, ErrUnknownRun, "no run %q", b.RunID))
	}
	if r.Status.Ended() {
		return refused(commandError(VerbCancel, k.session, ErrRunEnded, "run %q is %s", r.ID, r.Status))
	}
	reason := b.Reason
	if reason == "" {
		reason = "the run was cancelled"
	}
	var recs []record
	for _, cs := range r.Batch {
		if cs.Done() {
			continue
		}
		recs = append(recs, returnedEvent(k.session, r.ID, controlReturn(cs, toolsets.KindCancelled, &toolsets.Control{Message: fmt.Sprintf("tool %q: cancelled: %s", cs.Tool, reason)})))
	}
	recs = append(recs, newRecord(events.TypeRunCancelled, k.session, r.ID, "", events.RunCancelled{Reason: reason, By: b.By}))
	return carriedOut(r.ID, recs...)
}
