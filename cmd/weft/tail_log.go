package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

// errTailDone: tail printed its --count events.
var errTailDone = errors.New("tail: done")

// tailer prints tail's lines and counts them.
type tailer struct {
	out    *outputFlag
	stdout io.Writer
	count  int // stop after this many events (0: never)
	n      int
	p      *eventPrinter
}

// live prints the live messages of msgs until ctx ends or the count is
// reached.
func (t *tailer) live(ctx context.Context, msgs <-chan *nats.Msg) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-msgs:
			if err := t.printMsg(m.Subject, m.Data); err != nil {
				return err
			}
		}
	}
}

// fromLog prints the log's events matching filter after position since
// (or, with useLast, its last n matching events), then each new one as it
// is appended: the store's Subscribe reads the log and then follows it,
// with no gap and no repeat. The live model output of deltas (subscribed
// already) is printed as it comes, between them.
func (t *tailer) fromLog(ctx context.Context, store events.Store, filter string, since uint64, useLast bool, n int, deltas <-chan *nats.Msg) error {
	after := since
	if useLast {
		var ring []events.Event
		for ev, err := range store.ReadAll(ctx, 0) {
			if err != nil && !errors.Is(err, events.ErrPoison) {
				return fmt.Errorf("read the log: %w", err)
			}
			after = max(after, ev.Position)
			if err == nil && eventMatches(filter, ev) && n > 0 {
				if len(ring) == n {
					ring = ring[1:]
				}
				ring = append(ring, ev)
			}
		}
		for _, ev := range ring {
			if err := t.printEvent(ev); err != nil {
				return err
			}
		}
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	evs := make(chan events.Event, 256)
	errc := make(chan error, 1)
	go func() {
		defer close(evs)
		for ev, err := range store.Subscribe(sctx, after) {
			if err != nil {
				if !errors.Is(err, events.ErrPoison) {
					errc <- err
					return
				}
				continue
			}
			if !eventMatches(filter, ev) {
				continue
			}
			select {
			case evs <- ev:
			case <-sctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-deltas:
			if err := t.printMsg(m.Subject, m.Data); err != nil {
				return err
			}
		case ev, ok := <-evs:
			if !ok {
				select {
				case err := <-errc:
					return fmt.Errorf("follow the log: %w", err)
				default:
					return ctx.Err()
				}
			}
			if err := t.printEvent(ev); err != nil {
				return err
			}
		}
	}
}

// printEvent prints an event of the log, redacted as its live copy is.
func (t *tailer) printEvent(ev events.Event) error {
	live, err := events.Redact(ev)
	if err != nil {
		return fmt.Errorf("redact %s v%d: %w", ev.Stream, ev.Version, err)
	}
	b, err := events.AppendJSON(nil, &live, true)
	if err != nil {
		return err
	}
	subject, _ := bus.Default.Event(ev.Stream, string(ev.Type))
	return t.printMsg(subject, b)
}

// printMsg prints one message as a line; past the count it is
// errTailDone.
func (t *tailer) printMsg(subject string, data []byte) error {
	if t.count > 0 && t.n >= t.count {
		return errTailDone
	}
	t.n++
	if t.out.json() {
		fmt.Fprintf(t.stdout, "%s\n", data)
	} else if ev, err := events.ParseEvent(data); err != nil {
		fmt.Fprintf(t.stdout, "%s  (not an event: %v)\n", subject, err)
	} else {
		redacted := ""
		if len(ev.Redacted) > 0 {
			redacted = "  [redacted: " + strings.Join(ev.Redacted, ", ") + "]"
		}
		fmt.Fprintf(t.stdout, "%s  %s v%d  %-20s %s%s\n", ev.Time.Format(time.RFC3339Nano), ev.Stream, ev.Version, ev.Type, t.p.describe(ev), redacted)
	}
	if t.count > 0 && t.n >= t.count {
		return errTailDone
	}
	return nil
}

// eventMatches says whether ev's subject matches the subject filter.
func eventMatches(filter string, ev events.Event) bool {
	subject, err := bus.Default.Event(ev.Stream, string(ev.Type))
	return err == nil && bus.SubjectMatches(filter, subject)
}
