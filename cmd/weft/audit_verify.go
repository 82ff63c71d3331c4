package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// errChainBroken: weft audit verify found a stream whose keyed hash chain
// is broken, or that does not reach its checkpoint (exit status 1). The
// command's error wraps it and the *events.ChainError.
var errChainBroken = errors.New("audit verify: hash chain broken")

// errNoAnchor: weft audit verify was given neither the chain keys nor a
// checkpoint, and not --plain: the plain chain alone proves nothing against
// someone who can write the log, so it refuses rather than say "intact".
var errNoAnchor = errors.New("audit verify: nothing to verify the log against")

// verifyReport is what weft audit verify prints.
type verifyReport struct {
	OK      bool   `json:"ok"`
	Events  int    `json:"events"`  // events checked
	Streams int    `json:"streams"` // streams checked
	Where   string `json:"log"`
	// MACsChecked says every event's MAC was checked with the secret
	// chain keys; Unkeyed counts the events that carry none (accepted
	// only with --allow-unkeyed).
	MACsChecked bool `json:"macs_checked"`
	Unkeyed     int  `json:"unkeyed"`
	// Checkpoint is the anchor the log was checked against, if any.
	Checkpoint *checkpointReport `json:"checkpoint,omitempty"`
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

// checkpointReport describes the checkpoint a log was verified against.
type checkpointReport struct {
	File    string    `json:"file"`
	KeyID   string    `json:"key_id"`
	Time    time.Time `json:"time"`
	Streams int       `json:"streams"`
	// Anchored counts the checkpoint's streams found at their heads;
	// Beyond the checked events written after it.
	Anchored int `json:"anchored"`
	Beyond   int `json:"beyond"`
}

// runAuditVerify checks the keyed hash chain of every stream of the log,
// or of the given sessions' streams, and the checkpoint it is given.
func runAuditVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit verify", "[SESSION...] [--nats URL | --data DIR] [--keys FILE] [--checkpoint FILE [--keyring FILE]] [--allow-unkeyed | --plain] [--progress] [--json]", `
Checks the hash chain of the given sessions' streams (of every stream in the
log when none is given): each event must follow its predecessor's version
and carry its hash (events.Hash) as prev_hash, and, with the nodes' chain
keys (--keys; DIR/chain-keys.json with --data), a MAC of its hash under a
key of the keyring: a forged event fails even with the right prev_hash.
With --checkpoint (written by weft audit checkpoint, kept outside the log;
its signature is checked with the public keyring), every stream it names
must still reach its version with its hash there: a deleted, truncated or
replaced log and a changed last event are reported.

Events without a MAC (a log written before its nodes had keys) fail unless
--allow-unkeyed, which accepts them before a stream's first keyed event.
Without keys and a checkpoint it refuses, unless --plain: the plain chain
alone can be recomputed by anyone. Prints what it checked, or the first
broken event and exits with status 1. It names every poison message too
(one that is not a weft event, or an event whose data does not decode) and
then exits with status 1. The default --timeout is 10m. A progress line goes
to stderr when stderr is a terminal, or with --progress.`, stderr)
	src := addSourceFlags(fs, true)
	kf := addKeyFlags(fs)
	cpFile := fs.String("checkpoint", "", "verify the log against the checkpoint `FILE`")
	allowUnkeyed := fs.Bool("allow-unkeyed", false, "accept events without a MAC before a stream's first keyed event (a log written before keying)")
	plain := fs.Bool("plain", false, "check only the plain hash chain when no keys and no checkpoint are given (anyone can recompute it)")
	output := addOutputFlag(fs)
	progress := fs.Bool("progress", false, "draw the progress line on stderr even when it is not a terminal")
	ids, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if err := src.check(); err != nil {
		return err
	}
	if err := output.check(); err != nil {
		return err
	}
	if !setFlags(fs)["timeout"] {
		src.timeout = verifyTimeout // a long log takes its time
	}
	keys, err := kf.secret(src)
	if err != nil {
		return err
	}
	ring, err := kf.public(src, keys)
	if err != nil {
		return err
	}
	cp, err := readCheckpoint(*cpFile, ring)
	if err != nil {
		return err
	}
	if keys == nil && cp == nil && !*plain {
		return fmt.Errorf("%w: no chain keys (--keys FILE, DIR/%s with --data, $%s) and no --checkpoint FILE; --plain checks the plain hash chain only, which anyone who can write the log can recompute",
			errNoAnchor, events.ChainKeysFile, chainKeysEnv)
	}
	opts := events.VerifyOptions{Keys: keys, AllowUnkeyed: *allowUnkeyed, Checkpoint: cp}
	draw := *progress || isTerminal(stderr)
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		res, poison, err := verifyLog(ctx, s, ids, opts, draw, stderr)
		rep := verifyReport{OK: err == nil && len(poison) == 0, Events: res.Events, Streams: res.Streams, Where: s.where,
			MACsChecked: keys != nil, Unkeyed: res.Unkeyed, Quarantined: poison}
		if cp != nil {
			rep.Checkpoint = &checkpointReport{File: *cpFile, KeyID: cp.KeyID, Time: cp.Time, Streams: len(cp.Streams),
				Anchored: res.Anchored, Beyond: res.Beyond}
		}
		var ce *events.ChainError
		switch {
		case errors.As(err, &ce):
			rep.Broken = ce
		case err != nil:
			return err
		}
		if output.json() {
			if err := output.write(stdout, rep); err != nil {
				return err
			}
		} else {
			rep.writeText(stdout)
		}
		if ce != nil {
			return fmt.Errorf("%w: %w", errChainBroken, ce)
		}
		if len(poison) > 0 {
			return fmt.Errorf("%w: %d poison message(s), the first: %w", errPoison, len(poison), poison[0])
		}
		return nil
	})
}

// verifyLog verifies the log of s (the streams of the sessions ids, or all
// of them) with opts, drawing a progress line on stderr when draw. It
// returns the poison of those streams too (see quarantine): stored
// messages that are not events are left out of the chain, events that do
// not decode are still checked as links.
func verifyLog(ctx context.Context, s *logSource, ids []string, opts events.VerifyOptions, draw bool, stderr io.Writer) (events.VerifyResult, []*events.PoisonError, error) {
	total, err := s.lastPosition(ctx)
	if err != nil {
		return events.VerifyResult{}, nil, err
	}
	want := make(map[string]string, len(ids)) // stream → session id
	for _, id := range ids {
		want[events.SessionStream(id)] = id
	}
	if len(want) > 0 {
		opts.Include = func(stream string) bool { return want[stream] != "" }
	}
	bar := &progressBar{w: stderr, total: total}
	every := max(int(total/100), 1000)
	read := 0
	opts.Progress = func(n int) {
		if read = n; draw && n%every == 0 {
			bar.draw(uint64(n))
		}
	}
	var all []*events.PoisonError
	res, err := events.VerifyStreams(quarantine(s.store.ReadAll(ctx, 0), &all), opts)
	if draw {
		bar.draw(uint64(read))
		bar.done()
	}
	var poison []*events.PoisonError
	for _, p := range all {
		if len(want) == 0 || want[p.Stream] != "" {
			poison = append(poison, p)
		}
	}
	var ce *events.ChainError
	switch {
	case errors.As(err, &ce):
		return res, poison, err
	case err != nil:
		return res, poison, fmt.Errorf("read the log at %s: %w", s.where, err)
	}
	seen := make(map[string]bool, len(res.Heads))
	for _, h := range res.Heads {
		seen[h.Stream] = true
	}
	for stream, id := range want {
		if !seen[stream] {
			return res, poison, fmt.Errorf("session %q: %w (weft sessions lists them)", id, projections.ErrUnknownSession)
		}
	}
	return res, poison, nil
}

// writeText prints the report for a person.
func (rep *verifyReport) writeText(w io.Writer) {
	if ce := rep.Broken; ce != nil {
		fmt.Fprintf(w, "hash chain BROKEN after %d good events:\n", rep.Events)
		fmt.Fprintf(w, "  stream:  %s\n  version: %d\n  event:   %s\n  fault:   %s\n  want:    %s\n  got:     %s\n",
			ce.Stream, ce.Version, dash(ce.ID), ce.Fault, dash(ce.Want), dash(ce.Got))
		rep.writePoison(w)
		return
	}
	fmt.Fprintf(w, "hash chain intact: %d events in %d streams (%s)\n", rep.Events, rep.Streams, rep.Where)
	if rep.MACsChecked {
		fmt.Fprintf(w, "  keyed:      every keyed event's MAC checked with the chain keys\n")
	} else {
		fmt.Fprintf(w, "  keyed:      MACs NOT checked (no chain keys): the events after the checkpoint prove nothing\n")
	}
	if rep.Unkeyed > 0 {
		fmt.Fprintf(w, "  unkeyed:    %d events carry no MAC (written before the log was keyed)\n", rep.Unkeyed)
	}
	if cp := rep.Checkpoint; cp != nil {
		fmt.Fprintf(w, "  checkpoint: %s of %s (key %s): %d streams at their heads; %d events written after it\n",
			cp.File, cp.Time.Format(time.RFC3339), cp.KeyID, cp.Anchored, cp.Beyond)
	} else {
		fmt.Fprintf(w, "  checkpoint: none: a deleted stream or a truncated tail is not detectable (weft audit checkpoint writes one)\n")
	}
	rep.writePoison(w)
}

// writePoison prints one line per poison message of the report.
func (rep *verifyReport) writePoison(w io.Writer) {
	for _, p := range rep.Quarantined {
		fmt.Fprintf(w, "POISON %v\n", p)
	}
}
