package events

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Large payloads. An event's Data travels in one bus message and is stored
// in one log entry, both limited (NATS's max payload is 1 MiB by default).
// A backend with a blob store keeps Data longer than its inline limit
// (DefaultInlineBytes unless configured) in the blob store, content
// addressed by SHA-256, and stores the event with Data replaced by a
// reference:
//
//	{"$blob":{"sha256":"<64 hex digits>","size":<bytes>}}
//
// The reference is the stored event's Data, so the hash chain covers it
// (Hash), and the reference names the content by its hash, so the chain
// covers the content too: a blob whose bytes do not hash to the reference
// is refused when it is resolved (ErrBlobCorrupt). Reads resolve
// references: ReadStream, ReadAll and Subscribe return the content in Data
// and the reference in Blob, and Hash of such an event is the hash of the
// stored one. Events under the inline limit never touch the blob store.
//
// Blobs are written before the event that refers to them; an append that
// fails afterwards leaves a blob nothing refers to, which costs space and
// nothing else.

// DefaultInlineBytes is the largest Data a backend with a blob store keeps
// in the event itself: 256 KiB, a quarter of NATS's default max payload.
const DefaultInlineBytes = 256 << 10

// DefaultMaxBlobDataBytes is the largest Data a backend with a blob store
// accepts unless configured otherwise: 64 MiB (the runtime refuses tool
// results and model messages above its own, lower limit first).
const DefaultMaxBlobDataBytes = 64 << 20

// Errors of the blob store.
var (
	// ErrBlobNotFound: the blob store holds no blob of the reference.
	ErrBlobNotFound = errors.New("events: blob not found")
	// ErrBlobCorrupt: a blob's bytes do not match its reference (their
	// SHA-256 or their size), or a reference is malformed.
	ErrBlobCorrupt = errors.New("events: blob does not match its reference")
	// ErrUnresolvedBlob: Decode was given an event whose Data is a blob
	// reference that was not resolved (read it through a store with the
	// blob store, or resolve it with ResolveBlob).
	ErrUnresolvedBlob = errors.New("events: event data is an unresolved blob reference")
)

// BlobRef names a blob by its content: the hex SHA-256 of its bytes and
// their number.
type BlobRef struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// RefOf returns the reference of data.
func RefOf(data []byte) BlobRef {
	sum := sha256.Sum256(data)
	return BlobRef{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
}

// String returns "sha256:<hex>".
func (r BlobRef) String() string { return "sha256:" + r.SHA256 }

// Validate reports whether r is well formed: 64 lower-case hex digits and a
// size that is not negative. The error wraps ErrBlobCorrupt.
func (r BlobRef) Validate() error {
	if len(r.SHA256) != 2*sha256.Size || r.Size < 0 {
		return fmt.Errorf("%w: malformed reference %q of %d bytes", ErrBlobCorrupt, r.SHA256, r.Size)
	}
	for i := 0; i < len(r.SHA256); i++ {
		if c := r.SHA256[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return fmt.Errorf("%w: malformed reference %q", ErrBlobCorrupt, r.SHA256)
		}
	}
	return nil
}

// Check reports whether data is the content r names; the error wraps
// ErrBlobCorrupt and says what differs.
func (r BlobRef) Check(data []byte) error {
	if int64(len(data)) != r.Size {
		return fmt.Errorf("%w: %s: %d bytes, want %d", ErrBlobCorrupt, r, len(data), r.Size)
	}
	if got := RefOf(data); got.SHA256 != r.SHA256 {
		return fmt.Errorf("%w: %s: content hashes to %s", ErrBlobCorrupt, r, got)
	}
	return nil
}

// blobPrefix starts the stored Data of an event whose Data is a blob.
const blobPrefix = `{"$blob":{"sha256":"`

// EventData returns the Data a stored event has in place of the content r
// names: {"$blob":{"sha256":"…","size":N}}, compact, always the same bytes
// for the same reference.
func (r BlobRef) EventData() json.RawMessage {
	b := make([]byte, 0, len(blobPrefix)+len(r.SHA256)+32)
	b = append(b, blobPrefix...)
	b = append(b, r.SHA256...)
	b = append(b, `","size":`...)
	b = strconv.AppendInt(b, r.Size, 10)
	return append(b, "}}"...)
}

// IsBlobData reports whether data has the shape of a blob reference (see
// ParseBlobData for the strict check). It is cheap: events under the inline
// limit pay one prefix comparison.
func IsBlobData(data []byte) bool { return bytes.HasPrefix(data, []byte(blobPrefix)) }

// ParseBlobData returns the reference stored event Data holds. ok is false
// for Data that is not a reference. Data that starts like one but is not
// exactly the encoding EventData gives (other members, white space, a
// malformed hash) is an error wrapping ErrBlobCorrupt: a reference has one
// encoding, so that the hash chain over it is unambiguous.
func ParseBlobData(data []byte) (ref BlobRef, ok bool, err error) {
	if !IsBlobData(data) {
		return BlobRef{}, false, nil
	}
	var w struct {
		Blob *BlobRef `json:"$blob"`
	}
	if err := decodeStrict(data, &w); err != nil || w.Blob == nil {
		return BlobRef{}, true, fmt.Errorf("%w: malformed blob reference: %v", ErrBlobCorrupt, err)
	}
	if err := w.Blob.Validate(); err != nil {
		return BlobRef{}, true, err
	}
	if !bytes.Equal(data, w.Blob.EventData()) {
		return BlobRef{}, true, fmt.Errorf("%w: blob reference %s is not in its canonical encoding", ErrBlobCorrupt, w.Blob)
	}
	return *w.Blob, true, nil
}

// BlobStore is the port of a content-addressed store of large payloads. A
// backend that keeps large Data out of its events implements it (the
// JetStream store on a JetStream Object Store bucket, memstore in memory),
// and so does a standalone blob store a worker or a node is given.
//
// Methods are safe for concurrent use and block until done or ctx ends.
type BlobStore interface {
	// PutBlob stores data under its reference (RefOf) and returns it.
	// Putting the same content again is a no-op that returns the same
	// reference.
	PutBlob(ctx context.Context, data []byte) (BlobRef, error)
	// GetBlob returns the content ref names, checked against ref: it
	// returns an error wrapping ErrBlobNotFound when there is none, and
	// ErrBlobCorrupt when the stored bytes do not match ref.
	GetBlob(ctx context.Context, ref BlobRef) ([]byte, error)
}

// OffloadBlobs puts the Data of every event of batch longer than inline
// bytes into blobs and sets the event's Blob to its reference (Data keeps
// the content; the backend stores Blob.EventData() in its place, which is
// what AppendJSON writes). inline <= 0 means DefaultInlineBytes. It returns
// the references by index of batch, or nil when no event was offloaded
// (AppendResult.Blobs). Backends call it after PrepareAppend and before
// Chain. Errors are *Error with Op "append".
func OffloadBlobs(ctx context.Context, blobs BlobStore, stream string, batch []Event, inline int) ([]*BlobRef, error) {
	if inline <= 0 {
		inline = DefaultInlineBytes
	}
	var refs []*BlobRef
	for i := range batch {
		if len(batch[i].Data) <= inline {
			continue
		}
		ref, err := blobs.PutBlob(ctx, batch[i].Data)
		if err != nil {
			return nil, &Error{Op: "append", Stream: stream, Err: fmt.Errorf("event %d: store %d bytes of data as a blob: %w", i, len(batch[i].Data), err)}
		}
		if refs == nil {
			refs = make([]*BlobRef, len(batch))
		}
		batch[i].Blob, refs[i] = &ref, &ref
	}
	return refs, nil
}

// ResolveBlob replaces ev's Data by the content it refers to when it is a
// blob reference, and sets ev.Blob to the reference; other events are left
// as they are. The content is checked against the reference. Errors wrap
// ErrBlobCorrupt (a malformed reference or a blob that does not match),
// ErrBlobNotFound, or the blob store's error; with blobs nil, a reference
// is ErrUnresolvedBlob.
func ResolveBlob(ctx context.Context, blobs BlobStore, ev *Event) error {
	ref, ok, err := ParseBlobData(ev.Data)
	if !ok {
		return nil
	}
	fail := func(err error) error {
		return &Error{Op: "resolve blob", Stream: ev.Stream, Err: fmt.Errorf("event %s (version %d): %w", ev.ID, ev.Version, err)}
	}
	if err != nil {
		return fail(err)
	}
	if blobs == nil {
		return fail(fmt.Errorf("%w: %s and no blob store", ErrUnresolvedBlob, ref))
	}
	data, err := blobs.GetBlob(ctx, ref)
	if err != nil {
		return fail(err)
	}
	if err := ref.Check(data); err != nil {
		return fail(err)
	}
	// A copy, so that ref does not escape: events that are no reference
	// allocate nothing here.
	blob := ref
	ev.Data, ev.Blob = data, &blob
	return nil
}

// storedData returns the Data ev is stored and hashed with: the reference
// when Blob names ev's Data, else Data itself. Data that does not match
// Blob is hashed as it is, so that an altered content breaks the chain.
func (ev *Event) storedData() []byte {
	if ev.Blob == nil || ev.Blob.Check(ev.Data) != nil {
		return ev.Data
	}
	return ev.Blob.EventData()
}
