package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weft-run/weft/events"
)

// The blob subtests run for backends with a blob store (Options.Blobs):
// Data above the inline limit is kept by reference and resolved by every
// read, chained as stored, and checked against its hash.

// blobSizes are the sizes of Data the blob subtests append: over NATS's
// default max payload, and far over it.
var blobSizes = []int{2 << 20, 20 << 20}

// largeData returns tool.returned data of n bytes unique to this call:
// {"tool":"…"}, data the catalogue decodes (a store refuses any other).
func largeData(n int) []byte {
	const head, tail = `{"tool":"`, `"}`
	tag := randomPrefix()
	b := make([]byte, 0, n)
	b = append(b, head...)
	b = append(b, tag...)
	for len(b) < n-len(tail) {
		b = append(b, "0123456789abcdef"[len(b)%16])
	}
	return append(b, tail...)
}

// blobStore returns f's store as a blob store, failing the test if it is
// not one.
func (f *fixture) blobStore() events.BlobStore {
	f.t.Helper()
	bs, ok := f.s.(events.BlobStore)
	if !ok {
		f.t.Fatalf("%T has Options.Blobs set but does not implement events.BlobStore", f.s)
	}
	return bs
}

// testLargeData: events of 2 MB and 20 MB are appended (alone and in a
// batch with a small one) and read back byte for byte by ReadStream,
// ReadAll and Subscribe, with Blob set to the reference AppendResult.Blobs
// gave; small events carry no reference; the chain verifies, and each
// event's PrevHash is Hash of the resolved event before it.
func testLargeData(f *fixture) {
	t := f.t
	for _, size := range blobSizes {
		t.Run(fmt.Sprintf("%d MB", size>>20), func(t *testing.T) {
			f := f.sub(t)
			stream := f.stream(fmt.Sprintf("large-%d", size))
			big := event(events.TypeToolReturned, 0)
			big.Data = largeData(size)
			small := event(events.TypeToolProgress, 1)
			res := f.mustAppend(stream, events.NoStream, big)
			if len(res.Blobs) != 1 || res.Blobs[0] == nil || *res.Blobs[0] != events.RefOf(big.Data) {
				t.Fatalf("AppendResult.Blobs = %v, want [%s]", res.Blobs, events.RefOf(big.Data))
			}
			big2 := event(events.TypeToolReturned, 2)
			big2.Data = largeData(size)
			res = f.mustAppend(stream, events.Exact(1), small, big2)
			if len(res.Blobs) != 2 || res.Blobs[0] != nil || res.Blobs[1] == nil || *res.Blobs[1] != events.RefOf(big2.Data) {
				t.Fatalf("AppendResult.Blobs of a batch = %v, want [nil %s]", res.Blobs, events.RefOf(big2.Data))
			}
			want := []events.Event{big, small, big2}
			check := func(what string, got []events.Event) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
				}
				for i := range want {
					if !bytes.Equal(got[i].Data, want[i].Data) {
						t.Errorf("%s: event %d: data of %d bytes differs from the %d appended", what, i, len(got[i].Data), len(want[i].Data))
					}
					large := len(want[i].Data) > events.DefaultInlineBytes
					switch {
					case large && (got[i].Blob == nil || *got[i].Blob != events.RefOf(want[i].Data)):
						t.Errorf("%s: event %d: Blob = %v, want %s", what, i, got[i].Blob, events.RefOf(want[i].Data))
					case !large && got[i].Blob != nil:
						t.Errorf("%s: event %d of %d bytes: Blob = %v, want none", what, i, len(want[i].Data), got[i].Blob)
					}
				}
				if err := events.VerifyChain(got); err != nil {
					t.Errorf("%s: chain: %v", what, err)
				}
			}
			check("ReadStream", f.readStream(stream, 0))
			var all []events.Event
			for _, ev := range f.readAll(0) {
				if ev.Stream == stream {
					all = append(all, ev)
				}
			}
			check("ReadAll", all)
			var live []events.Event
			f.await("Subscribe", func() {
				for ev, err := range f.s.Subscribe(f.ctx, 0) {
					if err != nil {
						t.Errorf("Subscribe: %v", err)
						return
					}
					if ev.Stream == stream {
						live = append(live, ev)
					}
					if len(live) == len(want) {
						return
					}
				}
			})
			check("Subscribe", live)
			// The chain goes on from the stored form after a large event.
			f.mustAppend(stream, events.Exact(3), event(events.TypeToolProgress, 3))
			got := f.readStream(stream, 0)
			if len(got) != 4 || got[3].PrevHash != events.Hash(got[2]) {
				t.Errorf("the event after a large one has PrevHash %q, want Hash of the resolved large event", got[len(got)-1].PrevHash)
			}
		})
	}
}

// testBlobStore: PutBlob and GetBlob round trip by content; an unknown
// reference is ErrBlobNotFound; a malformed one ErrBlobCorrupt.
func testBlobStore(f *fixture) {
	t := f.t
	bs := f.blobStore()
	data := largeData(3 << 20)
	ref, err := bs.PutBlob(f.ctx, data)
	if err != nil {
		t.Fatalf("PutBlob: %v", err)
	}
	if ref != events.RefOf(data) {
		t.Fatalf("PutBlob = %s, want %s", ref, events.RefOf(data))
	}
	if again, err := bs.PutBlob(f.ctx, data); err != nil || again != ref {
		t.Fatalf("PutBlob again = %s, %v; want %s", again, err, ref)
	}
	got, err := bs.GetBlob(f.ctx, ref)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GetBlob = %d bytes, %v; want the %d put", len(got), err, len(data))
	}
	unknown := events.RefOf([]byte("never stored " + randomPrefix()))
	if _, err := bs.GetBlob(f.ctx, unknown); !errors.Is(err, events.ErrBlobNotFound) {
		t.Errorf("GetBlob of an unknown blob: %v, want ErrBlobNotFound", err)
	}
	for _, bad := range []events.BlobRef{
		{SHA256: "../" + strings.Repeat("a", 61), Size: 1},
		{SHA256: strings.ToUpper(ref.SHA256), Size: ref.Size},
		{SHA256: ref.SHA256, Size: -1},
	} {
		if _, err := bs.GetBlob(f.ctx, bad); !errors.Is(err, events.ErrBlobCorrupt) {
			t.Errorf("GetBlob(%+v): %v, want ErrBlobCorrupt", bad, err)
		}
	}
}

// testForgedReference: an appender cannot store a blob reference of its
// own as Data: it would name content the store never checked.
func testForgedReference(f *fixture) {
	t := f.t
	stream := f.stream("forged-ref")
	ev := event(events.TypeToolReturned, 0)
	ev.Data = events.RefOf([]byte(`"someone else's result"`)).EventData()
	if _, err := f.s.Append(f.ctx, stream, events.Any, ev); !errors.Is(err, events.ErrInvalidEvent) {
		t.Errorf("Append of a blob reference as data: %v, want ErrInvalidEvent", err)
	}
}

// testTamperedBlob: a blob whose stored bytes were replaced makes reads of
// the event that refers to it fail with ErrBlobCorrupt (ReadAll yields it
// as poison and goes on), never return the altered content.
func testTamperedBlob(f *fixture) {
	t := f.t
	if f.opts.TamperBlob == nil {
		t.Skip("Options.TamperBlob not set")
	}
	stream := f.stream("tampered")
	ev := event(events.TypeToolReturned, 0)
	ev.Data = largeData(2 << 20)
	f.mustAppend(stream, events.NoStream, ev)
	altered := bytes.Clone(ev.Data)
	altered[len(altered)/2] ^= 1
	f.opts.TamperBlob(t, f.s, events.RefOf(ev.Data), altered)
	if _, err := f.s.ReadStream(f.ctx, stream, 0); !errors.Is(err, events.ErrBlobCorrupt) {
		t.Errorf("ReadStream of an event whose blob was altered: %v, want ErrBlobCorrupt", err)
	}
	var err error
	for _, e := range f.s.ReadAll(f.ctx, 0) {
		if e != nil {
			err = e
		}
	}
	if !errors.Is(err, events.ErrBlobCorrupt) {
		t.Errorf("ReadAll over an event whose blob was altered: %v, want ErrBlobCorrupt", err)
	}
}
