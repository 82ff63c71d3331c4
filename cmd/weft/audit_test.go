package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/jetstream"
)

// TestAuditVerify: the log a node writes verifies, as a whole and per
// session, in text and JSON, with a progress line on request.
func TestAuditVerify(t *testing.T) {
	n, dir := testNode(t)
	s1, _ := demoWaiting(t, n)
	demoWaiting(t, n)
	url := "--nats=" + n.url
	keys := "--keys=" + filepath.Join(dir, events.ChainKeysFile)

	out := mustCLI(t, "audit", "verify", url, keys)
	wantContains(t, "audit verify", out, "hash chain intact", "in 2 streams", "MAC checked")

	rep := decodeJSON[verifyReport](t, mustCLI(t, "audit", "verify", s1.ID(), url, keys, "--json"))
	if !rep.OK || rep.Streams != 1 || rep.Events == 0 || rep.Broken != nil || !rep.MACsChecked || rep.Unkeyed != 0 {
		t.Errorf("audit verify %s --json = %+v, want ok over one keyed stream", s1.ID(), rep)
	}

	_, errOut, err := cli(t, "audit", "verify", url, keys, "--progress")
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "stderr of --progress", errOut, "events")
}

// TestAuditVerifyTampered copies a node's log into fresh embedded stores
// with one event altered, deleted or two swapped, bypassing the store's
// Append (so nothing re-chains them), and checks audit verify fails and
// names the first broken event: with the chain keys (an altered event
// fails its own MAC) and with --plain (the next event's prev_hash).
func TestAuditVerifyTampered(t *testing.T) {
	n, nodeDir := testNode(t)
	sess, _ := demoWaiting(t, n)
	stream := events.SessionStream(sess.ID())
	nc, err := bus.Connect(t.Context(), []string{n.url}, bus.WithRoleCredentials(n.credsDir, bus.RoleReader))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	store, err := jetstream.New(t.Context(), nc)
	if err != nil {
		t.Fatal(err)
	}
	good, err := store.ReadStream(t.Context(), stream, 0)
	if err != nil {
		t.Fatal(err)
	}
	store.Close()
	if len(good) < 5 {
		t.Fatalf("the demo session has %d events, too few to tamper with", len(good))
	}
	if err := events.VerifyChain(good); err != nil {
		t.Fatalf("the node's own log: %v", err)
	}

	altered := func(evs []events.Event) []events.Event {
		evs[2].Data = json.RawMessage(`{"altered":true}`)
		return evs
	}
	keys := "--keys=" + filepath.Join(nodeDir, events.ChainKeysFile)
	tests := []struct {
		name    string
		mode    string // --keys or --plain
		tamper  func([]events.Event) []events.Event
		version uint64 // of the first broken event
		idOf    int    // its index in the good log
		fault   events.ChainFault
		good    int // events checked before the break
	}{
		{"altered data", keys, altered, 3, 2, events.FaultBadMAC, 2},
		{"altered data, plain", "--plain", altered, 4, 3, events.FaultPrevHash, 3},
		{"deleted event", keys, func(evs []events.Event) []events.Event {
			return append(evs[:2:2], evs[3:]...)
		}, 4, 3, events.FaultVersionGap, 2},
		{"swapped events", "--plain", func(evs []events.Event) []events.Event {
			evs[2], evs[3] = evs[3], evs[2]
			return evs
		}, 4, 3, events.FaultVersionGap, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRawLog(t, filepath.Join(dir, "nats"), tc.tamper(append([]events.Event(nil), good...)))

			out, _, err := cli(t, "audit", "verify", "--data", dir, tc.mode)
			if !errors.Is(err, errChainBroken) {
				t.Fatalf("audit verify of a tampered log: %v, want errChainBroken\n%s", err, out)
			}
			var ce *events.ChainError
			if !errors.As(err, &ce) || ce.Version != tc.version || ce.ID != good[tc.idOf].ID.String() || ce.Fault != tc.fault {
				t.Errorf("error %v, want %s at version %d (event %s)", err, tc.fault, tc.version, good[tc.idOf].ID)
			}
			wantContains(t, "audit verify output", out, "BROKEN", good[tc.idOf].ID.String(), string(tc.fault))

			out, _, err = cli(t, "audit", "verify", "--data", dir, tc.mode, "--json")
			if !errors.Is(err, errChainBroken) {
				t.Fatalf("audit verify --json: %v", err)
			}
			rep := decodeJSON[verifyReport](t, out)
			if rep.OK || rep.Broken == nil || rep.Broken.ID != good[tc.idOf].ID.String() || rep.Events != tc.good {
				t.Errorf("audit verify --json = %+v, want the break at event %s after %d good events", rep, good[tc.idOf].ID, tc.good)
			}
		})
	}
}

// openStoreDir starts an embedded server (no port, no credentials) on the
// JetStream store directory storeDir and connects to it in-process, as a
// test that reads or writes a stopped node's store behind its back does;
// stop closes both, releasing the directory.
func openStoreDir(t *testing.T, storeDir string) (nc *nats.Conn, stop func()) {
	t.Helper()
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: storeDir})
	if err != nil {
		t.Fatal(err)
	}
	if nc, err = srv.Connect(); err != nil {
		srv.Shutdown()
		t.Fatal(err)
	}
	return nc, func() { nc.Close(); srv.Shutdown() }
}

// writeRawLog starts an embedded server on storeDir, creates weft's
// JetStream stream and publishes evs as event messages as they are, in
// order, then stops the server.
func writeRawLog(t *testing.T, storeDir string, evs []events.Event) {
	t.Helper()
	nc, stop := openStoreDir(t, storeDir)
	defer stop()
	store, err := jetstream.New(t.Context(), nc) // creates the stream
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	js, err := natsjs.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		subject, err := bus.Default.LogIngest(ev.Stream, string(ev.Type)) // the stream stores it under its event subject
		if err != nil {
			t.Fatal(err)
		}
		ev.Position = 0
		body, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(t.Context(), subject, body); err != nil {
			t.Fatalf("publish %s: %v", strings.TrimSpace(string(body)), err)
		}
	}
}
