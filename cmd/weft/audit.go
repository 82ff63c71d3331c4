package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// auditSubcommands are the words weft audit takes in place of a session id.
var auditSubcommands = map[string]command{
	"verify": {"recompute the hash chain of the log and report the first broken event", runAuditVerify},
}

// errChainBroken: weft audit verify found a stream whose hash chain is
// broken (exit status 1). The command's error wraps it and the
// *events.ChainError.
var errChainBroken = errors.New("audit verify: hash chain broken")

// verifyReport is what weft audit verify prints.
type verifyReport struct {
	OK      bool   `json:"ok"`
	Events  int    `json:"events"`  // events checked
	Streams int    `json:"streams"` // streams checked
	Where   string `json:"log"`
	// Broken is the first event at which a chain breaks (absent when OK).
	Broken *events.ChainError `json:"broken,omitempty"`
	// Quarantined lists the poison in the log: stored messages that are
	// not weft events, events whose data does not decode (not OK).
	Quarantined []*events.PoisonError `json:"quarantined,omitempty"`
}

// verifyTimeout is audit verify's default --timeout. Reads of a damaged
// store fail within seconds (see the jetstream package), so the bound is
// only for a long log; set --timeout for a longer one.
const verifyTimeout = 10 * time.Minute

// runAuditVerify checks the hash chain of every stream of the log, or of
// the given sessions' streams.
func runAuditVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit verify", "[SESSION...] [--nats URL | --data DIR] [--progress] [--json]", `
Recomputes the hash chain of the given sessions' streams (of every stream in
the log when none is given): each event must follow its predecessor's
version and carry its hash (events.Hash) as prev_hash. Prints how many
events it checked, or the first altered, missing or reordered event and
exits with status 1. It names every poison message too (one that is not a
weft event, or an event whose data does not decode) and then exits with
status 1. The default --timeout is 10m. A progress line goes to stderr when stderr is a
terminal, or with --progress.`, stderr)
	src := addSourceFlags(fs, true)
	asJSON := fs.Bool("json", false, "print the result as a JSON object")
	progress := fs.Bool("progress", false, "draw the progress line on stderr even when it is not a terminal")
	ids, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := src.check(); err != nil {
		return err
	}
	if !setFlags(fs)["timeout"] {
		src.timeout = verifyTimeout // a long log takes its time
	}
	draw := *progress || isTerminal(stderr)
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		total, err := s.lastPosition(ctx)
		if err != nil {
			return err
		}
		want := make(map[string]string, len(ids)) // stream → session id
		for _, id := range ids {
			want[events.SessionStream(id)] = id
		}
		seen := make(map[string]bool)
		var (
			bar  = &progressBar{w: stderr, total: total}
			read uint64
		)
		every := max(total/100, 1000)
		var poison []*events.PoisonError
		var filtered iter.Seq2[events.Event, error] = func(yield func(events.Event, error) bool) {
			for ev, err := range quarantine(s.store.ReadAll(ctx, 0), &poison) {
				if err == nil {
					if read++; draw && read%every == 0 {
						bar.draw(read)
					}
					if len(want) > 0 && want[ev.Stream] == "" {
						continue
					}
					seen[ev.Stream] = true
				}
				if !yield(ev, err) {
					return
				}
			}
		}
		n, err := events.VerifyStreams(filtered, nil)
		if draw {
			bar.draw(read)
			bar.done()
		}
		rep := verifyReport{OK: err == nil, Events: n, Streams: len(seen), Where: s.where}
		for _, p := range poison {
			if len(want) == 0 || want[p.Stream] != "" {
				rep.Quarantined = append(rep.Quarantined, p)
			}
		}
		rep.OK = rep.OK && len(rep.Quarantined) == 0
		var ce *events.ChainError
		switch {
		case errors.As(err, &ce):
			rep.Broken = ce
		case err != nil:
			return fmt.Errorf("read the log at %s: %w", s.where, err)
		}
		for stream, id := range want {
			if rep.OK && !seen[stream] {
				return fmt.Errorf("session %q: %w (weft sessions lists them)", id, projections.ErrUnknownSession)
			}
		}
		if *asJSON {
			if err := writeJSON(stdout, rep); err != nil {
				return err
			}
		} else if rep.OK {
			fmt.Fprintf(stdout, "hash chain intact: %d events in %d streams (%s)\n", rep.Events, rep.Streams, rep.Where)
		} else {
			if ce == nil {
				fmt.Fprintf(stdout, "hash chain intact: %d events in %d streams (%s)\n", rep.Events, rep.Streams, rep.Where)
			} else {
				fmt.Fprintf(stdout, "hash chain BROKEN after %d good events:\n", rep.Events)
				fmt.Fprintf(stdout, "  stream:  %s\n  version: %d\n  event:   %s\n  fault:   %s\n  want:    %s\n  got:     %s\n",
					ce.Stream, ce.Version, ce.ID, ce.Fault, dash(ce.Want), dash(ce.Got))
			}
			for _, p := range rep.Quarantined {
				fmt.Fprintf(stdout, "POISON %v\n", p)
			}
		}
		if ce != nil {
			return fmt.Errorf("%w: %w", errChainBroken, ce)
		}
		if len(rep.Quarantined) > 0 {
			return fmt.Errorf("%w: %d poison message(s), the first: %w", errPoison, len(rep.Quarantined), rep.Quarantined[0])
		}
		return nil
	})
}

// runAudit prints a session's audit timeline.
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if sub, ok := auditSubcommands[args[0]]; ok {
			return sub.run(ctx, args[1:], stdout, stderr)
		}
	}
	fs := newFlagSet("audit", "SESSION [--nats URL | --data DIR] [--json]", `
Prints the audit timeline of a session: one line per event with its time,
type, tool call, tool and outcome.`, stderr)
	src := addSourceFlags(fs, true)
	asJSON := fs.Bool("json", false, "print the timeline as a JSON array")
	id, err := parseSessionArgs(fs, src, args)
	if err != nil {
		return err
	}
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		audit := projections.NewAudit()
		if _, err := s.build(ctx, audit); err != nil {
			return err
		}
		lines, err := audit.Timeline(id)
		if err != nil {
			return unknownSession(id, err)
		}
		if *asJSON {
			return writeJSON(stdout, lines)
		}
		return audit.WriteText(stdout, id)
	})
}
