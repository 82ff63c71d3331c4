package events

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"slices"
)

// ErrBrokenChain matches every *ChainError.
var ErrBrokenChain = errors.New("events: broken hash chain")

// ChainFault says how a stream's chain is broken. The set is closed.
type ChainFault string

// The ways a chain breaks.
const (
	// FaultWrongStream: the event belongs to another stream than the
	// events before it.
	FaultWrongStream ChainFault = "wrong stream"
	// FaultVersionGap: the event's version is not the one after its
	// predecessor's (an event is missing, inserted or moved), or the first
	// event is not version 1.
	FaultVersionGap ChainFault = "version gap"
	// FaultPrevHash: the event's PrevHash is not the hash of the event
	// before it (the predecessor was altered, or this event was moved or
	// its PrevHash changed).
	FaultPrevHash ChainFault = "wrong prev hash"
	// FaultUnkeyed: the event carries no MAC where one is required: the
	// verifier checks keys and does not allow unkeyed events, or an
	// earlier event of the stream was keyed (a keyed stream never goes
	// back to unkeyed events: one was forged, or its MAC stripped).
	FaultUnkeyed ChainFault = "unkeyed event"
	// FaultUnknownKey: the event's KeyID names no key of the verifier's
	// keyring (it was keyed by another keyring: forged, or the log was
	// replaced).
	FaultUnknownKey ChainFault = "unknown key id"
	// FaultBadMAC: the event's MAC is not the MAC of its hash under the
	// key it names (the event was altered, or forged by someone without
	// the key).
	FaultBadMAC ChainFault = "wrong mac"
	// FaultCheckpointHash: the event at a checkpointed version does not
	// have the checkpoint's hash (it, or an event before it, was changed
	// and the chain recomputed, or the log was replaced).
	FaultCheckpointHash ChainFault = "differs from the checkpoint"
	// FaultTruncated: the stream ends before the checkpoint's version
	// (its tail was deleted).
	FaultTruncated ChainFault = "truncated before the checkpoint"
	// FaultStreamMissing: a stream of the checkpoint has no events in the
	// log (it was deleted, or the log replaced).
	FaultStreamMissing ChainFault = "stream missing (in the checkpoint)"
)

// ChainError reports the first event at which a stream's chain is broken.
// It matches ErrBrokenChain with errors.Is. A checkpoint fault about a
// stream that ends early or is missing has no event: ID is empty and
// Version is the checkpoint's.
type ChainError struct {
	Stream  string     `json:"stream"`
	Version uint64     `json:"version"` // the version the event claims
	Index   int        `json:"index"`   // its index in the verified sequence (0-based)
	ID      string     `json:"id"`
	Fault   ChainFault `json:"fault"`
	// Want and Got say what was expected and found: versions for a
	// version gap or a truncation, hashes for a wrong prev hash or a
	// checkpoint hash, stream names for a wrong stream, key ids for an
	// unknown key. A wrong MAC shows only the MAC found.
	Want string `json:"want"`
	Got  string `json:"got"`
}

func (e *ChainError) Error() string {
	return fmt.Sprintf("stream %q: event %s at version %d (index %d): %s: want %q, got %q",
		e.Stream, e.ID, e.Version, e.Index, e.Fault, e.Want, e.Got)
}

// Is reports whether target is ErrBrokenChain.
func (e *ChainError) Is(target error) bool { return target == ErrBrokenChain }

// Verifier checks one stream's chain an event at a time, for streams too
// long to hold in memory. The zero value checks the plain hash chain (which
// anyone can recompute) from version 1 of any stream, accepts unkeyed
// events and does not check MACs; set Keys to check them.
type Verifier struct {
	// Keys, when set, checks every event's MAC against the key its KeyID
	// names: an unknown key id or a wrong MAC is a fault, and so is an
	// event without a MAC unless AllowUnkeyed.
	Keys *ChainKeys
	// AllowUnkeyed accepts, with Keys set, unkeyed events before a
	// stream's first keyed one (a log written before its nodes had keys);
	// Unkeyed counts them. An unkeyed event after a keyed one is a fault
	// whatever the settings.
	AllowUnkeyed bool

	stream  string
	n       int
	last    uint64
	prev    string
	keyed   bool
	unkeyed int
	h       *hasher
}

// Next checks ev, the next event of the stream in version order, and
// returns the fault found, if any; an event that fails is not accepted, so
// the Verifier stays at the last good event. A stream verified from the
// start must begin at version 1 with an empty PrevHash.
func (v *Verifier) Next(ev Event) *ChainError {
	if v.h == nil {
		v.h = &hasher{h: sha256.New()}
	}
	fail := func(f ChainFault, want, got string) *ChainError {
		return &ChainError{Stream: v.stream, Version: ev.Version, Index: v.n, ID: ev.ID.String(), Fault: f, Want: want, Got: got}
	}
	if v.n == 0 {
		v.stream = ev.Stream
	}
	switch {
	case ev.Stream != v.stream:
		return fail(FaultWrongStream, v.stream, ev.Stream)
	case ev.Version != v.last+1:
		return fail(FaultVersionGap, fmt.Sprint(v.last+1), fmt.Sprint(ev.Version))
	case ev.PrevHash != v.prev:
		return fail(FaultPrevHash, v.prev, ev.PrevHash)
	}
	h := v.h.sum(&ev)
	unkeyed := ev.KeyID == "" && ev.MAC == ""
	switch {
	case unkeyed && v.keyed:
		return fail(FaultUnkeyed, "a key id and a MAC (the stream's earlier events are keyed)", "none")
	case unkeyed && v.Keys != nil && !v.AllowUnkeyed:
		return fail(FaultUnkeyed, "a key id and a MAC", "none")
	case !unkeyed && v.Keys != nil:
		k := v.Keys.Key(ev.KeyID)
		if k == nil {
			return fail(FaultUnknownKey, "a key of the keyring", ev.KeyID)
		}
		v.h.mac = k.appendMAC(v.h.mac[:0], h, &v.h.macs)
		if !hmac.Equal(v.h.mac, []byte(ev.MAC)) {
			return fail(FaultBadMAC, "the MAC of key "+k.id, ev.MAC)
		}
	}
	if unkeyed {
		v.unkeyed++
	} else {
		v.keyed = true
	}
	v.n++
	v.last = ev.Version
	v.prev = h
	return nil
}

// Last returns the version and hash of the last event Next accepted.
func (v *Verifier) Last() (version uint64, hash string) { return v.last, v.prev }

// Unkeyed returns how many accepted events carry no MAC.
func (v *Verifier) Unkeyed() int { return v.unkeyed }

// VerifyChain checks that evs is a whole stream (from version 1, in version
// order) whose plain chain is intact, and returns the first broken event or
// nil. It checks no MACs: see Verifier.Keys.
func VerifyChain(evs []Event) *ChainError {
	var v Verifier
	for _, ev := range evs {
		if err := v.Next(ev); err != nil {
			return err
		}
	}
	return nil
}

// StreamHead is where a stream ends: its last version and the Hash of the
// event there.
type StreamHead struct {
	Stream  string `json:"stream"`
	Version uint64 `json:"version"`
	Hash    string `json:"hash"`
}

// VerifyOptions say what VerifyStreams checks beyond the plain chain.
type VerifyOptions struct {
	// Keys and AllowUnkeyed are those of every stream's Verifier.
	Keys         *ChainKeys
	AllowUnkeyed bool
	// Checkpoint, when set, anchors the log: every stream it names must
	// reach its version with its hash there (the caller checks its
	// signature first, with Checkpoint.Verify).
	Checkpoint *Checkpoint
	// Include, when set, limits the check to the streams it accepts
	// (events of other streams are skipped, and so are the checkpoint's
	// heads of other streams).
	Include func(stream string) bool
	// Progress, when set, is called after every event read with the count
	// so far (skipped events included).
	Progress func(read int)
}

// VerifyResult is what VerifyStreams checked.
type VerifyResult struct {
	Events  int `json:"events"`  // events checked
	Streams int `json:"streams"` // streams checked
	// Unkeyed counts checked events without a MAC.
	Unkeyed int `json:"unkeyed"`
	// Anchored counts the checkpoint's streams found at its heads;
	// Beyond the checked events after the checkpoint's heads (or in
	// streams it does not name): the ones only their MACs vouch for.
	Anchored int `json:"anchored"`
	Beyond   int `json:"beyond"`
	// Heads are the last version and hash of every checked stream, by
	// stream name.
	Heads []StreamHead `json:"-"`
}

// VerifyStreams checks the chain of every stream in a log read in global
// order (as ReadAll yields it or a JSONL history holds it): each stream's
// events must come in version order from version 1, and pass the checks of
// opts. It returns what it checked and the first broken event of any stream
// (a *ChainError, a checkpoint fault included), or the first error of seq.
func VerifyStreams(seq iter.Seq2[Event, error], opts VerifyOptions) (VerifyResult, error) {
	var res VerifyResult
	vs := make(map[string]*Verifier)
	anchors := make(map[string]StreamHead)
	if opts.Checkpoint != nil {
		for _, h := range opts.Checkpoint.Streams {
			if opts.Include == nil || opts.Include(h.Stream) {
				anchors[h.Stream] = h
			}
		}
	}
	read := 0
	for ev, err := range seq {
		if err != nil {
			return res, err
		}
		if read++; opts.Progress != nil {
			opts.Progress(read)
		}
		if opts.Include != nil && !opts.Include(ev.Stream) {
			continue
		}
		v := vs[ev.Stream]
		if v == nil {
			v = &Verifier{stream: ev.Stream, Keys: opts.Keys, AllowUnkeyed: opts.AllowUnkeyed}
			vs[ev.Stream] = v
		}
		if cerr := v.Next(ev); cerr != nil {
			return res.finish(vs), cerr
		}
		res.Events++
		a, anchored := anchors[ev.Stream]
		switch {
		case !anchored || ev.Version > a.Version:
			res.Beyond++
		case ev.Version == a.Version:
			if _, h := v.Last(); h != a.Hash {
				return res.finish(vs), &ChainError{Stream: ev.Stream, Version: ev.Version, Index: v.n - 1, ID: ev.ID.String(),
					Fault: FaultCheckpointHash, Want: a.Hash, Got: h}
			}
			res.Anchored++
		}
	}
	res = res.finish(vs)
	// The checkpoint's streams, in name order: each must reach its head.
	for _, a := range sortedHeads(anchors) {
		v := vs[a.Stream]
		switch {
		case v == nil:
			return res, &ChainError{Stream: a.Stream, Version: a.Version, Index: -1, Fault: FaultStreamMissing,
				Want: fmt.Sprintf("%d events", a.Version), Got: "none"}
		case v.last < a.Version:
			return res, &ChainError{Stream: a.Stream, Version: a.Version, Index: -1, Fault: FaultTruncated,
				Want: fmt.Sprintf("version %d", a.Version), Got: fmt.Sprintf("version %d", v.last)}
		}
	}
	return res, nil
}

// finish fills the counts and heads of the verifiers.
func (res VerifyResult) finish(vs map[string]*Verifier) VerifyResult {
	res.Streams, res.Unkeyed, res.Heads = len(vs), 0, make([]StreamHead, 0, len(vs))
	for s, v := range vs {
		res.Unkeyed += v.unkeyed
		if v.n > 0 {
			res.Heads = append(res.Heads, StreamHead{Stream: s, Version: v.last, Hash: v.prev})
		}
	}
	slices.SortFunc(res.Heads, func(a, b StreamHead) int { return cmp.Compare(a.Stream, b.Stream) })
	return res
}

func sortedHeads(m map[string]StreamHead) []StreamHead {
	out := make([]StreamHead, 0, len(m))
	for _, h := range m {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b StreamHead) int { return cmp.Compare(a.Stream, b.Stream) })
	return out
}
