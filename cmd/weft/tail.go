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

// errBadFilter: a tail filter that is not a NATS subject filter, or one
// that matches no event subject.
var errBadFilter = errors.New("bad subject filter")

// runTail prints live events matching a subject filter.
func runTail(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tail", "FILTER [--nats URL] [--count N] [--json] [--deltas]", `
Prints the events published from now on whose subject matches FILTER, a NATS
subject filter over the event subjects weft.evt.<category>.<id>.<type>:

  weft.evt.>                            every event
  weft.evt.session.*.tool.returned      every tool return of every session
  weft.evt.session.SESSION.>            every event of one session

'*' matches one token, '>' the rest. These are the live copies of the events:
their private surfaces (a tool return's private_metadata, captured errors)
are redacted, and the line says so; weft show and weft audit read the whole
events from the log. With --deltas it also prints the live output of streaming
models in the streams FILTER names (weft.delta.<category>.<id>: model.delta
lines, never stored). Stops after --count messages, or when interrupted.`, stderr)
	src := addSourceFlags(fs, false)
	output := addOutputFlag(fs)
	count := fs.Int("count", 0, "stop after `N` events (0: never)")
	withDeltas := fs.Bool("deltas", false, "also print the live model output (model.delta) of the streams FILTER names")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError(fs, "needs exactly one FILTER, got %q", pos)
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
	cctx, cancel := context.WithTimeout(ctx, src.timeout)
	nc, err := connect(cctx, src.natsURL, src.auth.options()...)
	cancel()
	if err != nil {
		return err
	}
	defer nc.Close()
	filters := []string{filter}
	if *withDeltas {
		filters = append(filters, deltaFilter(bus.Default, filter))
	}
	ch := make(chan *nats.Msg, 1024)
	for _, f := range filters {
		sub, err := nc.ChanSubscribe(f, ch)
		if err != nil {
			return fmt.Errorf("subscribe to %s: %w", f, err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	if err := nc.FlushTimeout(src.timeout); err != nil {
		return fmt.Errorf("subscribe to %s: %w", filter, err)
	}
	fmt.Fprintf(stderr, "tailing %s on %s\n", strings.Join(filters, " and "), src.natsURL)
	p := &eventPrinter{}
	for n := 0; *count == 0 || n < *count; n++ {
		var m *nats.Msg
		select {
		case <-ctx.Done():
			return nil
		case m = <-ch:
		}
		if output.json() {
			fmt.Fprintf(stdout, "%s\n", m.Data)
			continue
		}
		ev, err := events.ParseEvent(m.Data)
		if err != nil {
			fmt.Fprintf(stdout, "%s  (not an event: %v)\n", m.Subject, err)
			continue
		}
		redacted := ""
		if len(ev.Redacted) > 0 {
			redacted = "  [redacted: " + strings.Join(ev.Redacted, ", ") + "]"
		}
		fmt.Fprintf(stdout, "%s  %s v%d  %-20s %s%s\n", ev.Time.Format(time.RFC3339Nano), ev.Stream, ev.Version, ev.Type, p.describe(ev), redacted)
	}
	return nil
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
// that it can match an event subject of subj (<root>.evt.…).
func checkEventFilter(subj bus.Subjects, filter string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", errBadFilter, filter, fmt.Sprintf(format, args...))
	}
	if filter == "" {
		return bad("empty")
	}
	if i := strings.IndexFunc(filter, func(r rune) bool { return r <= ' ' || r == 0x7f }); i >= 0 {
		return bad("white space or a control character at byte %d", i)
	}
	toks := strings.Split(filter, ".")
	for i, t := range toks {
		switch {
		case t == "":
			return bad("empty token %d (two dots in a row, or a dot at an end)", i+1)
		case t == ">" && i != len(toks)-1:
			return bad("'>' must be the last token")
		case t != "*" && t != ">" && strings.ContainsAny(t, "*>"):
			return bad("token %q: '*' and '>' must be whole tokens", t)
		}
	}
	// Event subjects are <root tokens>.evt.<category>.<id>.<type tokens>.
	want := append(strings.Split(subj.Root(), "."), "evt")
	for i, w := range want {
		if i >= len(toks) {
			return bad("too short to match an event subject (%s.<category>.<id>.<type>)", strings.Join(want, "."))
		}
		switch toks[i] {
		case ">":
			return nil
		case "*", w:
			continue
		}
		return bad("matches no event: event subjects are %s.<category>.<id>.<type>, e.g. %s.session.*.tool.returned", strings.Join(want, "."), strings.Join(want, "."))
	}
	if rest := toks[len(want):]; len(rest) == 0 || len(rest) < 3 && rest[len(rest)-1] != ">" {
		return bad("too short to match an event subject (%s.<category>.<id>.<type>); end it with '>' to match the rest", strings.Join(want, "."))
	}
	return nil
}
