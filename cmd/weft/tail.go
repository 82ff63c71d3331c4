package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/weft-run/weft/bus"
)

// errBadFilter: a tail filter that is not a NATS subject filter, or one
// that matches no event subject.
var errBadFilter = errors.New("bad subject filter")

// runTail prints events matching a subject filter: live ones, or from
// the log first (--since, --last) and then live.
func runTail(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tail", "FILTER [--since POSITION | --last N] [--nats URL] [--count N] [--timeout D] [-o jsonl] [--deltas]", `
Prints the events published from now on whose subject matches FILTER, a NATS
subject filter over the event subjects weft.evt.<category>.<id>.<type>:

  weft.evt.>                            every event
  weft.evt.session.*.tool.returned      every tool return of every session
  weft.evt.session.SESSION.>            every event of one session

'*' matches one token, '>' the rest. These are the live copies of the events:
their private surfaces (a tool return's private_metadata, captured errors)
are redacted, and the line says so; weft show and weft audit read the whole
events from the log. --since POSITION first prints the matching events of
the log after POSITION (an event's position: its SSE id, "position" in
JSON), --last N the last N matching events of the log, then both go on live
with no gap and no repeat (those are read from the log, redacted the same
way). With --deltas it also prints the live output of streaming models in
the streams FILTER names (weft.delta.<category>.<id>: model.delta lines,
never stored). Stops after --count events, after --timeout when it is
given, or when interrupted.`, stderr)
	src := addSourceFlags(fs, false)
	output := addOutputFlag(fs)
	count := fs.Int("count", 0, "stop after `N` events (0: never)")
	withDeltas := fs.Bool("deltas", false, "also print the live model output (model.delta) of the streams FILTER names")
	since := fs.Uint64("since", 0, "first print the matching events of the log after `POSITION`")
	last := fs.Int("last", 0, "first print the last `N` matching events of the log")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	set := setFlags(fs)
	switch {
	case len(pos) != 1:
		return usageError(fs, "needs exactly one FILTER, got %q", pos)
	case set["since"] && set["last"]:
		return usageError(fs, "--since and --last exclude each other")
	case *last < 0:
		return usageError(fs, "--last must not be negative, got %d", *last)
	}
	if err := src.check(); err != nil {
		return err
	}
	if err := output.check(); err != nil {
		return err
	}
	if *count < 0 {
		return usageError(fs, "--count must not be negative, got %d", *count)
	}
	filter := pos[0]
	if err := checkEventFilter(bus.Default, filter); err != nil {
		return fmt.Errorf("%w: tail: %w (weft tail -h shows examples)", errUsage, err)
	}
	if set["timeout"] {
		// The whole tail ends after --timeout (not a failure: it is how
		// long to watch).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, src.timeout)
		defer cancel()
	}
	fromLog := set["since"] || set["last"]
	// Live only, a connection; from the log, the event store too.
	cctx, cancel := context.WithTimeout(ctx, src.timeout)
	s := &logSource{where: src.natsURL}
	if fromLog {
		s, err = openSource(cctx, src)
	} else {
		s.nc, err = connect(cctx, src.natsURL, src.auth.options()...)
	}
	cancel()
	if err != nil {
		return err
	}
	defer s.Close()
	t := &tailer{out: output, stdout: stdout, count: *count, p: &eventPrinter{}}
	msgs := make(chan *nats.Msg, 1024)
	var filters []string
	if !fromLog {
		filters = append(filters, filter)
	}
	if *withDeltas {
		filters = append(filters, deltaFilter(bus.Default, filter))
	}
	for _, f := range filters {
		sub, err := s.nc.ChanSubscribe(f, msgs)
		if err != nil {
			return fmt.Errorf("subscribe to %s: %w", f, err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	if err := s.nc.FlushTimeout(src.timeout); err != nil {
		return fmt.Errorf("subscribe to %s: %w", filter, err)
	}
	if fromLog {
		fmt.Fprintf(stderr, "tailing %s on %s from the log\n", strings.Join(append([]string{filter}, filters...), " and "), src.natsURL)
		err = t.fromLog(ctx, s.store, filter, *since, set["last"], *last, msgs)
	} else {
		fmt.Fprintf(stderr, "tailing %s on %s\n", strings.Join(filters, " and "), src.natsURL)
		err = t.live(ctx, msgs)
	}
	if errors.Is(err, errTailDone) || ctx.Err() != nil {
		return nil
	}
	return err
}

// deltaFilter returns the filter of the live model output of the streams
// that event filter (checked by checkEventFilter) names: the same
// <category>.<id> tokens under <root>.delta, whatever the type tokens.
func deltaFilter(subj bus.Subjects, filter string) string {
	root := strings.Split(subj.Root(), ".")
	toks := strings.Split(filter, ".")
	rest := toks[len(root):] // the evt token, <category>, <id>, <type tokens>
	if rest[0] == ">" {
		return subj.AllDeltas()
	}
	out := strings.Split(subj.AllDeltas(), ".")
	out = out[:len(out)-1] // <root>.delta
	for _, t := range rest[1:] {
		out = append(out, t)
		if t == ">" || len(out) == len(root)+3 {
			break
		}
	}
	return strings.Join(out, ".")
}

// checkEventFilter checks that filter is a valid NATS subject filter and
// that it can match an event subject of subj (<root>.evt.…), with
// bus.Subjects.CheckEventFilter; its errors match errBadFilter.
func checkEventFilter(subj bus.Subjects, filter string) error {
	err := subj.CheckEventFilter(filter)
	if fe, ok := errors.AsType[*bus.FilterError](err); ok {
		return fmt.Errorf("%w %q: %s", errBadFilter, fe.Filter, fe.Reason)
	}
	return err
}
