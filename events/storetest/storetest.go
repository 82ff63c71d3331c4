// Package storetest is the conformance suite every events.Store backend
// runs. A backend's test calls Run with a Factory that returns a fresh,
// empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t testing.TB) events.Store {
//			s := memstore.New()
//			t.Cleanup(func() { s.Close() })
//			return s
//		}, storetest.Options{})
//	}
//
// and its benchmarks call RunBenchmarks the same way.
//
// Every subtest takes its own store from the Factory and names its streams
// with a random prefix; reads of the global log (ReadAll, Subscribe) ignore
// streams without that prefix, so the suite also passes against a shared
// server that already holds other data.
//
// The subtests: round trip; expected version (each kind, refusals as
// *events.WrongVersionError with Actual, nothing written); batch all or
// nothing; idempotent re-append; concurrent appenders (read version →
// Append(Exact) → retry; every version taken once); global order; read
// stream from version; read missing stream; subscribe catch-up then live;
// subscribe resume from checkpoint; subscribe ends on cancel; payload
// limit; invalid stream names; valid stream names (characters special to
// NATS subjects or escaping schemes stay distinct streams); empty append;
// invalid event; close; append steps (events.AppendSteps: in order, chained,
// fenced, idempotent); concurrent step appenders (no fork, no loss, order
// kept); hash chain (PrevHash of version 1 is "", each next is events.Hash of
// the previous, across batches, expected-version kinds and idempotent
// re-appends); hash chain of racing appenders (Any appends from several
// goroutines); with Options.Blobs, large data by reference (2 MB and 20 MB
// events resolved by every read, chained as stored), the blob store, a
// forged reference refused, a tampered blob refused.
//
// Beyond what the events.Store documentation states, the suite requires:
//
//   - Time survives to the nanosecond (compared with time.Time.Equal) and
//     Data survives byte for byte when it is compact JSON;
//   - Data of exactly Options.MaxDataBytes bytes is accepted;
//   - ReadStream from a version past the end of an existing stream returns
//     no events and no error;
//   - Close ends live subscriptions with an error matching
//     events.ErrClosed, and every later call fails with ErrClosed (ReadAll
//     and Subscribe yield it as their only element);
//   - the events of a batch refused for any reason are not remembered for
//     deduplication: the same ids can be appended afterwards.
//
// Every wait is bounded (see Timeout), so a broken backend fails the suite
// instead of hanging it.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// Factory returns a fresh, empty store and registers its own cleanup with
// t.Cleanup. The suite may Close the store itself; Close is idempotent.
type Factory func(t testing.TB) events.Store

// Options tunes the suite to a backend.
type Options struct {
	// MaxDataBytes is the largest Data the backend accepts; the suite
	// appends exactly that much (which must succeed) and MaxDataBytes+1
	// (which must fail with ErrPayloadTooLarge). 0 means
	// events.DefaultMaxDataBytes.
	MaxDataBytes int
	// Concurrency is the number of appenders in the concurrency test
	// (default 8).
	Concurrency int
	// ChainKeys, when set, are the chain keys the Factory's stores were
	// given: the suite then also checks that every appended event is
	// keyed with the current key and that the log verifies with them.
	ChainKeys *events.ChainKeys
	// Blobs says the backend keeps large Data in a blob store (it
	// implements events.BlobStore): the blob subtests append 2 MB and
	// 20 MB events (MaxDataBytes must allow them) and check that reads
	// resolve them. Without it, the suite checks only that Data over
	// MaxDataBytes is refused.
	Blobs bool
	// TamperBlob, for a backend with Blobs, replaces the stored bytes of
	// the blob ref with data, behind the store's back (as damage or an
	// attacker would), so the suite can check reads refuse it.
	TamperBlob func(t testing.TB, s events.Store, ref events.BlobRef, data []byte)
}

// Timeout bounds every wait of one subtest: a subscription that has not
// delivered what it should within it fails the subtest.
const Timeout = 30 * time.Second

// LargeTimeout bounds the waits of the subtests that append and read back
// data of up to MaxDataBytes (32 MiB by default): under the race detector
// on a 2-core machine one such round trip alone takes 25–30 s.
const LargeTimeout = 3 * time.Minute

// large names the subtests LargeTimeout bounds.
var large = map[string]bool{"payload limit": true, "large data by reference": true}

// Run runs every conformance subtest against stores from newStore.
func Run(t *testing.T, newStore Factory, opts Options) {
	if opts.MaxDataBytes <= 0 {
		opts.MaxDataBytes = events.DefaultMaxDataBytes
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	tests := []struct {
		name string
		run  func(*fixture)
	}{
		{"round trip", testRoundTrip},
		{"expected version", testExpectedVersion},
		{"batch all or nothing", testBatchAllOrNothing},
		{"idempotent re-append", testIdempotent},
		{"concurrent appenders", testConcurrentAppenders},
		{"hash chain", testHashChain},
		{"hash chain of racing appenders", testHashChainRace},
		{"global order", testGlobalOrder},
		{"read stream from version", testReadStreamFrom},
		{"read missing stream", testReadMissing},
		{"subscribe catch-up then live", testSubscribeCatchUpLive},
		{"subscribe resume from checkpoint", testSubscribeResume},
		{"subscribe ends on cancel", testSubscribeCancel},
		{"payload limit", testPayloadLimit},
		{"invalid stream names", testInvalidStreams},
		{"valid stream names", testValidStreams},
		{"empty append", testEmptyAppend},
		{"invalid event", testInvalidEvent},
		{"close", testClose},
		{"append steps", testSteps},
		{"concurrent step appenders", testConcurrentSteps},
	}
	if opts.ChainKeys != nil {
		tests = append(tests, struct {
			name string
			run  func(*fixture)
		}{"keyed chain", testKeyedChain})
	}
	if opts.Blobs {
		tests = append(tests, []struct {
			name string
			run  func(*fixture)
		}{
			{"large data by reference", testLargeData},
			{"blob store", testBlobStore},
			{"forged blob reference", testForgedReference},
			{"tampered blob", testTamperedBlob},
		}...)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			timeout := Timeout
			if large[tc.name] {
				timeout = LargeTimeout
			}
			tc.run(newFixture(t, newStore, opts, timeout))
		})
	}
}

// fixture is one subtest's store, context and stream-name prefix.
type fixture struct {
	t      *testing.T
	s      events.Store
	ctx    context.Context
	wait   time.Duration // what bounds ctx: Timeout or LargeTimeout
	prefix string
	opts   Options
	// newStore makes the stores of fresh fixtures.
	newStore Factory
}

func newFixture(t *testing.T, newStore Factory, opts Options, timeout time.Duration) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return &fixture{t: t, s: newStore(t), ctx: ctx, wait: timeout, prefix: randomPrefix(), opts: opts, newStore: newStore}
}

// fresh returns a fixture with a new store for the subtest t.
func (f *fixture) fresh(t *testing.T) *fixture {
	t.Helper()
	return newFixture(t, f.newStore, f.opts, f.wait)
}

// sub returns f for the subtest t.
func (f *fixture) sub(t *testing.T) *fixture {
	c := *f
	c.t = t
	return &c
}

// randomPrefix returns a fresh stream-name prefix such as "st3fa29c1e-".
func randomPrefix() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "st" + hex.EncodeToString(b[:]) + "-"
}

// stream returns the name of this fixture's stream called name.
func (f *fixture) stream(name string) string { return f.prefix + name }

// mine reports whether ev belongs to one of this fixture's streams.
func (f *fixture) mine(ev events.Event) bool { return strings.HasPrefix(ev.Stream, f.prefix) }

// event returns a new event of type typ with a fresh id and data that
// tells n apart and decodes as typ's data struct (stores refuse data that
// does not): {"attempt":n} for a tool event, {"output":n} else.
func event(typ events.Type, n int) events.Event {
	data := fmt.Sprintf(`{"output":%d}`, n)
	if strings.HasPrefix(string(typ), "tool.") {
		data = fmt.Sprintf(`{"tool":"t","attempt":%d}`, n)
	}
	return events.Event{
		ID:   uuid.Must(uuid.NewV7()),
		Type: typ,
		Data: json.RawMessage(data),
	}
}

// eventsN returns n events numbered from first.
func eventsN(first, n int) []events.Event {
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = event(events.TypeToolProgress, first+i)
	}
	return evs
}

// mustAppend appends and fails the test on error.
func (f *fixture) mustAppend(stream string, expected events.ExpectedVersion, evs ...events.Event) events.AppendResult {
	f.t.Helper()
	res, err := f.s.Append(f.ctx, stream, expected, evs...)
	if err != nil {
		f.t.Fatalf("Append(%q, %v, %d events): %v", stream, expected, len(evs), err)
	}
	return res
}

// readStream reads stream from version from and fails the test on error.
func (f *fixture) readStream(stream string, from uint64) []events.Event {
	f.t.Helper()
	evs, err := f.s.ReadStream(f.ctx, stream, from)
	if err != nil {
		f.t.Fatalf("ReadStream(%q, %d): %v", stream, from, err)
	}
	return evs
}

// readAll returns this fixture's events with Position > after, in global
// order, and fails the test on error.
func (f *fixture) readAll(after uint64) []events.Event {
	f.t.Helper()
	var out []events.Event
	for ev, err := range f.s.ReadAll(f.ctx, after) {
		if err != nil {
			f.t.Fatalf("ReadAll(%d): %v", after, err)
		}
		if f.mine(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// ids returns the ids of evs.
func ids(evs []events.Event) []uuid.UUID {
	out := make([]uuid.UUID, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

// checkPositions fails the test unless positions strictly increase.
func (f *fixture) checkPositions(what string, evs []events.Event) {
	f.t.Helper()
	for i := 1; i < len(evs); i++ {
		if evs[i].Position <= evs[i-1].Position {
			f.t.Fatalf("%s: position %d at index %d does not follow position %d", what, evs[i].Position, i, evs[i-1].Position)
		}
	}
}

// await runs fn in a goroutine and waits for it, failing the test if it
// has not returned within Timeout plus a grace period: fn's own waits are
// bounded by the fixture's context, so a backend that ignores the context
// is caught here instead of hanging the suite.
func (f *fixture) await(what string, fn func()) {
	f.t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	timer := time.NewTimer(f.wait + 10*time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		f.t.Fatalf("%s did not return after its context expired", what)
	}
}
