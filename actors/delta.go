package actors

import (
	"context"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
)

// askModel sends req to model and returns its complete answer. A model that
// streams (llm.Streamer) is asked through its stream, and what it writes
// is published while it writes, as model.delta live copies on the
// session's delta subject (see "Live model output" in doc.go); the answer
// is recorded as one model.response either way.
func (h *Host) askModel(ctx context.Context, model llm.Model, session string, req *llm.Request) (*llm.Response, error) {
	s, ok := model.(llm.Streamer)
	if !ok {
		return model.Request(ctx, req)
	}
	return h.askStream(ctx, model, s, session, req)
}

// askStream is askModel of a model that streams (apart, so that a plain
// request pays nothing for the stream's state).
func (h *Host) askStream(ctx context.Context, model llm.Model, s llm.Streamer, session string, req *llm.Request) (*llm.Response, error) {
	out := deltaPublisher{h: h, session: session, run: req.Run.RunID, step: req.Run.Step}
	var resp *llm.Response
	for ev, err := range s.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		out.publish(ev)
		if ev.Response != nil {
			resp = ev.Response
		}
	}
	if resp == nil {
		return nil, &llm.ModelError{Model: llm.NameOf(model), Err: llm.ErrIncompleteStream}
	}
	return resp, nil
}

// deltaPublisher publishes the live output of one model request.
type deltaPublisher struct {
	h             *Host
	session, run  string
	step, seq     int
	subject       string
	subjectBytes  []byte // subject, for HostConfig.Interest
	subjectFailed bool
}

// publish offers the host's live publisher the delta ev carries, when it
// carries one and someone listens. Deltas are best effort: one the
// publisher has no room for is dropped (Seq shows the gap), so a consumer
// that stops reading never slows the run.
func (d *deltaPublisher) publish(ev llm.StreamEvent) {
	h := d.h
	if h.live == nil || (ev.TextDelta == "" && len(ev.ToolCalls) == 0) || d.subjectFailed {
		return
	}
	d.seq++
	if d.subject == "" {
		s, err := h.subj.Delta(events.SessionStream(d.session))
		if err != nil {
			d.subjectFailed = true
			h.log.Warn("delta subject", "session", d.session, "err", err)
			return
		}
		d.subject, d.subjectBytes = s, []byte(s)
	}
	if h.cfg.Interest != nil && !h.cfg.Interest(d.subjectBytes) {
		return
	}
	data := events.ModelDelta{Step: d.step, Seq: d.seq, Text: ev.TextDelta}
	if len(ev.ToolCalls) > 0 {
		data.ToolCalls = make([]events.ToolCallDelta, len(ev.ToolCalls))
		for i, c := range ev.ToolCalls {
			data.ToolCalls[i] = events.ToolCallDelta{Index: c.Index, ID: c.ID, Name: c.Name, Arguments: c.ArgumentsDelta}
		}
	}
	rec := newRecord(events.TypeModelDelta, d.session, d.run, "", data)
	rec.Stream = events.SessionStream(d.session)
	h.live.offer(rec, d.subject)
}
