package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"sync"
	"time"
)

// The hash chain makes a stream tamper-evident: every event carries in
// PrevHash the Hash of the event before it in its stream ("" for version 1),
// so altering, deleting, inserting or reordering a stored event breaks the
// chain at that event or the next one. The store computes PrevHash at
// append, under the same check as the expected version, so every writer's
// events are chained; VerifyChain and Verifier recompute it. Anyone can
// recompute it, too: a store with chain keys also keys every link (see
// ChainKey), and a Checkpoint anchors the heads outside the log.

// hashDomain starts every hashed encoding, so the hash of an event can
// never collide with a hash of anything else computed the same way.
const hashDomain = "weft.event.v1"

// Hash returns the hex SHA-256 of ev's canonical encoding: every envelope
// field except Position (which the store assigns in the global order and
// which a backend may renumber), KeyID and MAC (which authenticate the
// hash) and Redacted (set only on a live copy, never stored; see Redact),
// in this order:
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
	hexBuf [hexLen]byte
	mac    []byte // the hex MAC Verifier builds
	macs   macScratch
	// chain's batch: the hex hash (and MAC) of each event, made one
	// string at the end.
	links []byte
}

// hexLen is the length of a hex Hash, and of a hex MAC (HMAC-SHA256).
const hexLen = 2 * sha256.Size

var hashers = sync.Pool{New: func() any { return &hasher{h: sha256.New()} }}

func (h *hasher) sum(ev *Event) string { return string(h.sumHex(ev, nil, false)) }

// sumHex is sum in h's buffer, valid until h is used again. When override
// is set, it hashes prev in place of ev.PrevHash (chain passes the
// previous event's hash, still in its links buffer).
func (h *hasher) sumHex(ev *Event, prev []byte, override bool) []byte {
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
	if override {
		b = binary.BigEndian.AppendUint64(b, uint64(len(prev)))
		b = append(b, prev...)
	} else {
		str(ev.PrevHash)
	}
	data := h.compact(ev.storedData())
	b = binary.BigEndian.AppendUint64(b, uint64(len(data)))
	h.h.Reset()
	h.h.Write(b)
	h.h.Write(data)
	h.buf = b
	hex.Encode(h.hexBuf[:], h.h.Sum(h.digest[:0]))
	return h.hexBuf[:]
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
// outside its string literals. Data with no white space byte at all (four
// vectorized scans) has none; otherwise it skips each string literal to
// its closing quote with bytes.IndexByte (a quote closes the string when
// an even number of backslashes precede it) and looks at the bytes
// between strings one by one.
func hasInsignificantSpace(data []byte) bool {
	if bytes.IndexByte(data, ' ') < 0 && bytes.IndexByte(data, '\n') < 0 &&
		bytes.IndexByte(data, '\t') < 0 && bytes.IndexByte(data, '\r') < 0 {
		return false
	}
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			return true
		case '"':
			j := i + 1
			for {
				k := bytes.IndexByte(data[j:], '"')
				if k < 0 {
					return false // an unterminated string runs to the end
				}
				j += k
				escapes := 0
				for b := j - 1; b > i && data[b] == '\\'; b-- {
					escapes++
				}
				if escapes%2 == 0 {
					break
				}
				j++
			}
			i = j
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

// Chain numbers, chains and keys batch for an append on top of a stream
// at version current whose last event has hash prev ("" when current is
// 0): batch[i] gets Version current+i+1 and the PrevHash of its
// predecessor, and, when key is not nil, KeyID key.ID() and the MAC of its
// Hash under key (both empty when key is nil). It returns the hash of the
// batch's last event, the prev of the next append. Backends call it after
// PrepareAppend, with the stream's version and last hash read under the
// same condition as the expected-version check, and with their chain
// keys' current key.
func Chain(batch []Event, current uint64, prev string, key *ChainKey) string {
	return chain(batch, current, prev, key, nil)
}

// ChainHashes is Chain that also returns the Hash of every event of batch,
// by index (the last is Chain's result): backends return them in
// AppendResult.Hashes, so that the appender does not hash its events
// again.
func ChainHashes(batch []Event, current uint64, prev string, key *ChainKey) []string {
	hashes := make([]string, len(batch))
	chain(batch, current, prev, key, hashes)
	return hashes
}

// chain is Chain, recording each event's hash in hashes when it is not
// nil. The hashes and MACs of the batch are built in one buffer and made
// one string, which the events' PrevHash and MAC and hashes slice.
func chain(batch []Event, current uint64, prev string, key *ChainKey, hashes []string) string {
	h := hashers.Get().(*hasher)
	defer hashers.Put(h)
	// Each event's link: its hex hash, then its hex MAC when keyed.
	stride := hexLen
	if key != nil {
		stride = 2 * hexLen
	}
	links := h.links[:0]
	for i := range batch {
		ev := &batch[i]
		ev.Version = current + uint64(i) + 1
		var hb []byte
		if i == 0 {
			ev.PrevHash = prev
			hb = h.sumHex(ev, nil, false)
		} else {
			// The previous event's hash, in links (appends below only
			// write past it).
			at := (i - 1) * stride
			hb = h.sumHex(ev, links[at:at+hexLen], true)
		}
		links = append(links, hb...)
		if key != nil {
			links = key.appendMACBytes(links, hb, &h.macs)
		}
	}
	h.links = links
	all := string(links)
	for i := range batch {
		ev := &batch[i]
		at := i * stride
		ev.PrevHash, ev.KeyID, ev.MAC = prev, "", ""
		if key != nil {
			ev.KeyID, ev.MAC = key.id, all[at+hexLen:at+stride]
		}
		prev = all[at : at+hexLen]
		if hashes != nil {
			hashes[i] = prev
		}
	}
	return prev
}

// StoredHashes returns the Hash of each of evs, stored events (the
// Hashes of an AppendResult for a duplicate re-append).
func StoredHashes(evs []Event) []string {
	h := hashers.Get().(*hasher)
	defer hashers.Put(h)
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = h.sum(&evs[i])
	}
	return out
}
