package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"iter"
	"sync"
	"time"
)

// The hash chain makes a stream tamper-evident: every event carries in
// PrevHash the Hash of the event before it in its stream ("" for version 1),
// so altering, deleting, inserting or reordering a stored event breaks the
// chain at that event or the next one. The store computes PrevHash at
// append, under the same check as the expected version, so every writer's
// events are chained; VerifyChain and Verifier recompute it.

// hashDomain starts every hashed encoding, so the hash of an event can
// never collide with a hash of anything else computed the same way.
const hashDomain = "weft.event.v1"

// Hash returns the hex SHA-256 of ev's canonical encoding: every envelope
// field except Position (which the store assigns in the global order and
// which a backend may renumber), in this order:
//
//	"weft.event.v1", ID (its 36-character string form), Stream,
//	Version (8 bytes), Type, SchemaVersion (8 bytes),
//	Time (UTC, RFC 3339 with nanoseconds: time.RFC3339Nano),
//	SessionID, RunID, ToolCallID, CorrelationID, CausationID, PrevHash,
//	Data (compacted with json.Compact: insignificant white space removed)
//
// Each string or byte field is written as its length (8 bytes, big endian)
// followed by its bytes; the two numbers are 8 bytes, big endian (the
// schema version as a two's-complement int64). Data is compacted so that a
// re-encoding that only changes white space (such as WriteJSONL) keeps the
// hash; Data that is not valid JSON is hashed as it is. For an event with
// Blob set, Data is the stored reference (Blob.EventData()) when the
// content matches Blob, else the content as it is (so an altered content
// breaks the chain).
func Hash(ev Event) string {
	h := hashers.Get().(*hasher)
	defer hashers.Put(h)
	return h.sum(&ev)
}

// hasher holds reusable buffers for Hash.
type hasher struct {
	h      hash.Hash
	buf    []byte
	data   bytes.Buffer
	digest [sha256.Size]byte
	hexBuf [2 * sha256.Size]byte
}

var hashers = sync.Pool{New: func() any { return &hasher{h: sha256.New()} }}

func (h *hasher) sum(ev *Event) string {
	b := h.buf[:0]
	str := func(s string) {
		b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(hashDomain)
	b = binary.BigEndian.AppendUint64(b, 36)
	b = appendUUID(b, ev)
	str(ev.Stream)
	b = binary.BigEndian.AppendUint64(b, ev.Version)
	str(string(ev.Type))
	b = binary.BigEndian.AppendUint64(b, uint64(int64(ev.SchemaVersion)))
	b = binary.BigEndian.AppendUint64(b, 0) // length, patched below
	at := len(b)
	b = ev.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	binary.BigEndian.PutUint64(b[at-8:at], uint64(len(b)-at))
	str(ev.SessionID)
	str(ev.RunID)
	str(ev.ToolCallID)
	str(ev.CorrelationID)
	str(ev.CausationID)
	str(ev.PrevHash)
	data := h.compact(ev.storedData())
	b = binary.BigEndian.AppendUint64(b, uint64(len(data)))
	h.h.Reset()
	h.h.Write(b)
	h.h.Write(data)
	h.buf = b
	hex.Encode(h.hexBuf[:], h.h.Sum(h.digest[:0]))
	return string(h.hexBuf[:])
}

// compact returns data as json.Compact would write it, or data itself if
// it is not valid JSON. Data with no white space outside its strings is
// returned as it is without running Compact (the runtime's events, encoded
// by json.Marshal, are already compact): Compact only removes such white
// space, and leaves an invalid document to be hashed as it is either way.
func (h *hasher) compact(data []byte) []byte {
	if !hasInsignificantSpace(data) {
		return data
	}
	h.data.Reset()
	if json.Compact(&h.data, data) == nil {
		return h.data.Bytes()
	}
	return data
}

// hasInsignificantSpace reports whether data has a JSON white space byte
// outside its string literals.
func hasInsignificantSpace(data []byte) bool {
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return true
		}
	}
	return false
}

// appendUUID appends the string form of ev.ID to dst.
func appendUUID(dst []byte, ev *Event) []byte {
	var s [36]byte
	hex.Encode(s[0:8], ev.ID[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], ev.ID[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], ev.ID[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], ev.ID[8:10])
	s[23] = '-'
	hex.Encode(s[24:], ev.ID[10:])
	return append(dst, s[:]...)
}

// Chain numbers and chains batch for an append on top of a stream at
// version current whose last event has hash prev ("" when current is 0):
// batch[i] gets Version current+i+1 and the PrevHash of its predecessor.
// It returns the hash of the batch's last event, the prev of the next
// append. Backends call it after PrepareAppend, with the stream's version
// and last hash read under the same condition as the expected-version
// check.
func Chain(batch []Event, current uint64, prev string) string {
	h := hashers.Get().(*hasher)
	defer hashers.Put(h)
	for i := range batch {
		batch[i].Version = current + uint64(i) + 1
		batch[i].PrevHash = prev
		prev = h.sum(&batch[i])
	}
	return prev
}

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
)

// ChainError reports the first event at which a stream's chain is broken.
// It matches ErrBrokenChain with errors.Is.
type ChainError struct {
	Stream  string     `json:"stream"`
	Version uint64     `json:"version"` // the version the event claims
	Index   int        `json:"index"`   // its index in the verified sequence (0-based)
	ID      string     `json:"id"`
	Fault   ChainFault `json:"fault"`
	// Want and Got say what was expected and found: versions for a
	// version gap, hashes for a wrong prev hash, stream names for a wrong
	// stream.
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
// long to hold in memory. The zero value expects version 1 of any stream.
type Verifier struct {
	stream string
	n      int
	last   uint64
	prev   string
	h      *hasher
}

// Next checks ev, the next event of the stream in version order, and
// returns the fault found, if any; an event that fails is not accepted, so
// the Verifier stays at the last good event. A stream verified from the start must begin at version 1 with an empty
// PrevHash.
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
	var err *ChainError
	switch {
	case ev.Stream != v.stream:
		err = fail(FaultWrongStream, v.stream, ev.Stream)
	case ev.Version != v.last+1:
		err = fail(FaultVersionGap, fmt.Sprint(v.last+1), fmt.Sprint(ev.Version))
	case ev.PrevHash != v.prev:
		err = fail(FaultPrevHash, v.prev, ev.PrevHash)
	}
	if err != nil {
		return err
	}
	v.n++
	v.last = ev.Version
	v.prev = v.h.sum(&ev)
	return nil
}

// Last returns the version and hash of the last event Next accepted.
func (v *Verifier) Last() (version uint64, hash string) { return v.last, v.prev }

// VerifyChain checks that evs is a whole stream (from version 1, in version
// order) whose chain is intact, and returns the first broken event or nil.
func VerifyChain(evs []Event) *ChainError {
	var v Verifier
	for _, ev := range evs {
		if err := v.Next(ev); err != nil {
			return err
		}
	}
	return nil
}

// VerifyStreams checks the chain of every stream in a log read in global
// order (as ReadAll yields it or a JSONL history holds it): each stream's
// events must come in version order from version 1. It returns the first
// broken event of any stream and the number of events checked, or the
// first error of seq. progress, if not nil, is called after every event
// with the count so far.
func VerifyStreams(seq iter.Seq2[Event, error], progress func(n int)) (int, error) {
	vs := make(map[string]*Verifier)
	n := 0
	for ev, err := range seq {
		if err != nil {
			return n, err
		}
		v := vs[ev.Stream]
		if v == nil {
			v = &Verifier{stream: ev.Stream}
			vs[ev.Stream] = v
		}
		if cerr := v.Next(ev); cerr != nil {
			return n, cerr
		}
		n++
		if progress != nil {
			progress(n)
		}
	}
	return n, nil
}
