package events

import (
	"cmp"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"
)

// A Checkpoint is the audit anchor: the heads of a log's streams (each
// one's last version and the Hash of the event there) at a time, signed
// with a chain key's Ed25519 half, and kept outside the log. Because each
// head's hash covers its whole stream through the chain, a log verified
// against it (VerifyOptions.Checkpoint) proves that every checkpointed
// stream still holds, unchanged, every event it held then; a deleted or
// truncated stream, a replaced log and a changed last event are reported.
// A verifier needs only the public keyring to check its signature.
type Checkpoint struct {
	Format  string       `json:"format"`
	Time    time.Time    `json:"time"`
	KeyID   string       `json:"key_id"`
	Streams []StreamHead `json:"streams"` // by stream name, each once
	// Signature is the Ed25519 signature of the checkpoint's signed
	// encoding (see signed) under the key KeyID names.
	Signature []byte `json:"signature"`
}

const checkpointFormat = "weft.checkpoint.v1"

// ErrBadCheckpoint matches every error about a checkpoint that does not
// decode, is not well formed, names an unknown key or whose signature does
// not verify.
var ErrBadCheckpoint = errors.New("events: bad checkpoint")

// NewCheckpoint returns the checkpoint of heads at time at, signed with
// key. heads must name each stream once.
func NewCheckpoint(heads []StreamHead, key *ChainKey, at time.Time) (*Checkpoint, error) {
	c := &Checkpoint{Format: checkpointFormat, Time: at.UTC(), KeyID: key.id, Streams: slices.Clone(heads)}
	slices.SortFunc(c.Streams, func(a, b StreamHead) int { return cmp.Compare(a.Stream, b.Stream) })
	if err := c.wellFormed(); err != nil {
		return nil, err
	}
	c.Signature = key.Sign(c.signed())
	return c, nil
}

// Verify checks c's form and its signature with the key of ring its KeyID
// names. Errors wrap ErrBadCheckpoint.
func (c *Checkpoint) Verify(ring *PublicKeyring) error {
	if err := c.wellFormed(); err != nil {
		return err
	}
	p, ok := ring.Key(c.KeyID)
	if !ok {
		return fmt.Errorf("%w: signed with key %q, which the keyring does not hold", ErrBadCheckpoint, c.KeyID)
	}
	if !ed25519.Verify(p.Key, c.signed(), c.Signature) {
		return fmt.Errorf("%w: the signature does not verify with key %s (the checkpoint was changed, or signed by another key)", ErrBadCheckpoint, c.KeyID)
	}
	return nil
}

func (c *Checkpoint) wellFormed() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadCheckpoint, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Format != checkpointFormat:
		return bad("format %q, want %q", c.Format, checkpointFormat)
	case c.KeyID == "":
		return bad("no key id")
	case c.Time.IsZero():
		return bad("no time")
	}
	for i, h := range c.Streams {
		switch {
		case ValidateStream(h.Stream) != nil:
			return bad("stream %d: invalid name %q", i, h.Stream)
		case h.Version == 0 || len(h.Hash) != 64:
			return bad("stream %q: version %d, hash %q: want a version and a 64-digit hash", h.Stream, h.Version, h.Hash)
		case i > 0 && c.Streams[i-1].Stream >= h.Stream:
			return bad("streams not in name order, or %q twice", h.Stream)
		}
	}
	return nil
}

// signed is the encoding the signature covers: "weft.checkpoint.v1", the
// time (UTC, RFC 3339 with nanoseconds), the key id, the number of streams
// (8 bytes) and each stream's name, version (8 bytes) and hash; strings
// as their length (8 bytes) and bytes; numbers big endian.
func (c *Checkpoint) signed() []byte {
	b := appendLenString(nil, checkpointFormat)
	b = appendLenString(b, c.Time.UTC().Format(time.RFC3339Nano))
	b = appendLenString(b, c.KeyID)
	b = binary.BigEndian.AppendUint64(b, uint64(len(c.Streams)))
	for _, h := range c.Streams {
		b = appendLenString(b, h.Stream)
		b = binary.BigEndian.AppendUint64(b, h.Version)
		b = appendLenString(b, h.Hash)
	}
	return b
}

// ReadCheckpoint reads a checkpoint file. It does not check the signature
// (Verify does). Errors wrap ErrBadCheckpoint, or the file's error.
func ReadCheckpoint(path string) (*Checkpoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return DecodeCheckpoint(b)
}

// DecodeCheckpoint decodes a checkpoint's JSON, refusing unknown fields.
func DecodeCheckpoint(b []byte) (*Checkpoint, error) {
	var c Checkpoint
	if err := decodeFile(b, &c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCheckpoint, err)
	}
	if err := c.wellFormed(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Encode returns c's JSON, indented, with a final newline.
func (c *Checkpoint) Encode() []byte {
	b, _ := json.MarshalIndent(c, "", "  ") // a Checkpoint always encodes
	return append(b, '\n')
}

// WriteCheckpoint writes c to path (mode 0644), replacing the file
// atomically.
func WriteCheckpoint(path string, c *Checkpoint) error {
	return writeJSONFile(path, c, 0o644)
}
