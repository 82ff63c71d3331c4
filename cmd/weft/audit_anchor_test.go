package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/jetstream"
)

// nodeLog runs two demo sessions on a node and returns the node's data
// directory, the whole log and the two sessions' streams.
func nodeLog(t *testing.T) (n *node, dir string, log []events.Event, s1, s2 string) {
	t.Helper()
	n, dir = testNode(t)
	a, _ := demoWaiting(t, n)
	b, _ := demoWaiting(t, n)
	nc, err := bus.Connect(t.Context(), []string{n.url}, bus.WithRoleCredentials(n.credsDir, bus.RoleReader))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	store, err := jetstream.New(t.Context(), nc)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for ev, err := range store.ReadAll(t.Context(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, ev)
	}
	return n, dir, log, events.SessionStream(a.ID()), events.SessionStream(b.ID())
}

// without returns log without the events keep rejects.
func without(log []events.Event, drop func(i int, ev events.Event) bool) []events.Event {
	var out []events.Event
	for i, ev := range log {
		if !drop(i, ev) {
			out = append(out, ev)
		}
	}
	return out
}

// lastOf returns the index in log of stream's last event.
func lastOf(log []events.Event, stream string) int {
	last := -1
	for i, ev := range log {
		if ev.Stream == stream {
			last = i
		}
	}
	return last
}

// TestAuditAnchorAttacks: a node's log is copied, as an attacker with
// write access to the store would leave it, into a fresh data directory
// (bypassing Append), and weft audit verify, with the node's keys or with
// only its public keyring, is run against a checkpoint written before the
// attack. Every attack fails the verification with the fault named.
func TestAuditAnchorAttacks(t *testing.T) {
	n, nodeDir, log, s1, s2 := nodeLog(t)
	keys := "--keys=" + filepath.Join(nodeDir, events.ChainKeysFile)
	ring := "--keyring=" + filepath.Join(nodeDir, events.KeyringFile)
	cpFile := filepath.Join(t.TempDir(), "checkpoint.json")
	out := mustCLI(t, "audit", "checkpoint", "--nats", n.url, keys, "--out", cpFile)
	wantContains(t, "audit checkpoint", out, "checkpoint of 2 streams", cpFile)
	cp := "--checkpoint=" + cpFile
	// The untouched copy verifies, with the keys and as a reader.
	intact := t.TempDir()
	writeRawLog(t, filepath.Join(intact, "nats"), log)
	out = mustCLI(t, "audit", "verify", "--data", intact, keys, cp)
	wantContains(t, "audit verify of the copy", out, "intact", "MAC checked", "2 streams at their heads")
	out = mustCLI(t, "audit", "verify", "--data", intact, ring, cp)
	wantContains(t, "audit verify of the copy by a reader", out, "intact", "MACs NOT checked", "2 streams at their heads")
	other, err := events.NewChainKeys()
	if err != nil {
		t.Fatal(err)
	}
	// forged is an event appended at the end of s1 the way a writer
	// without the key does it: the right version and plain prev_hash.
	forged := func(key *events.ChainKey) []events.Event {
		last := log[lastOf(log, s1)]
		ev := last
		ev.ID[15]++
		// A copy of the last event (valid data of its type) under a new id.
		evs := []events.Event{ev}
		events.Chain(evs, last.Version, events.Hash(last), key)
		return append(slices.Clone(log), evs...)
	}
	changedLast := func() []events.Event {
		evs := slices.Clone(log)
		i := lastOf(evs, s1)
		evs[i].Data = json.RawMessage(`{"changed":true}`)
		return evs
	}
	tests := []struct {
		name   string
		log    []events.Event
		args   []string // how the log is verified
		stream string
		fault  events.ChainFault
	}{
		{"forged event with the right prev_hash", forged(nil), []string{keys}, s1, events.FaultUnkeyed},
		{"forged event keyed with another key", forged(other.Current()), []string{keys}, s1, events.FaultUnknownKey},
		{"tail truncated, against the checkpoint", without(log, func(i int, _ events.Event) bool { return i == lastOf(log, s1) }), []string{keys, cp}, s1, events.FaultTruncated},
		{"stream deleted, against the checkpoint", without(log, func(_ int, ev events.Event) bool { return ev.Stream == s1 }), []string{keys, cp}, s1, events.FaultStreamMissing},
		{"log deleted, against the checkpoint", nil, []string{keys, cp}, min(s1, s2), events.FaultStreamMissing},
		{"last event changed, with the keys", changedLast(), []string{keys, cp}, s1, events.FaultBadMAC},
		{"last event changed, a reader against the checkpoint", changedLast(), []string{ring, cp}, s1, events.FaultCheckpointHash},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRawLog(t, filepath.Join(dir, "nats"), tc.log)
			out, _, err := cli(t, append([]string{"audit", "verify", "--data", dir}, tc.args...)...)
			var ce *events.ChainError
			if !errors.Is(err, errChainBroken) || !errors.As(err, &ce) || ce.Stream != tc.stream || ce.Fault != tc.fault {
				t.Fatalf("audit verify: %v, want %s in %s\n%s", err, tc.fault, tc.stream, out)
			}
			wantContains(t, "audit verify output", out, "BROKEN", string(tc.fault))
			if strings.Contains(out, "intact") {
				t.Errorf("output says intact:\n%s", out)
			}
		})
	}
}

// TestAuditCheckpointRefusals: a checkpoint file changed after it was
// written is refused; audit checkpoint writes nothing for a broken log and
// never blesses a truncation of a previous checkpoint's log; audit verify
// with neither keys nor a checkpoint refuses unless --plain; and without a
// checkpoint a truncated tail verifies (the documented limit).
func TestAuditCheckpointRefusals(t *testing.T) {
	n, nodeDir, log, s1, _ := nodeLog(t)
	keys := "--keys=" + filepath.Join(nodeDir, events.ChainKeysFile)
	cpFile := filepath.Join(t.TempDir(), "checkpoint.json")
	mustCLI(t, "audit", "checkpoint", "--nats", n.url, keys, "--out", cpFile)
	b, err := os.ReadFile(cpFile)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	heads := c["streams"].([]any)
	for _, h := range heads {
		if h := h.(map[string]any); h["stream"] == s1 {
			h["version"] = h["version"].(float64) - 1 // hide a truncated last event
		}
	}
	tampered := filepath.Join(t.TempDir(), "tampered.json")
	b, _ = json.Marshal(c)
	if err := os.WriteFile(tampered, b, 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := t.TempDir()
	writeRawLog(t, filepath.Join(truncated, "nats"), without(log, func(i int, _ events.Event) bool { return i == lastOf(log, s1) }))

	_, _, err = cli(t, "audit", "verify", "--data", truncated, keys, "--checkpoint", tampered)
	if !errors.Is(err, errBadCheckpoint) || !errors.Is(err, events.ErrBadCheckpoint) {
		t.Errorf("audit verify against a tampered checkpoint: %v, want errBadCheckpoint", err)
	}
	out := mustCLI(t, "audit", "verify", "--data", truncated, keys)
	wantContains(t, "audit verify of a truncated log without a checkpoint (not detectable)", out, "intact", "checkpoint: none")

	next := filepath.Join(t.TempDir(), "next.json")
	_, _, err = cli(t, "audit", "checkpoint", "--data", truncated, keys, "--checkpoint", cpFile, "--out", next)
	if !errors.Is(err, errChainBroken) {
		t.Errorf("audit checkpoint of a truncated log against the previous checkpoint: %v, want errChainBroken", err)
	}
	forged := t.TempDir()
	ev := log[lastOf(log, s1)]
	ev.ID[15]++
	evs := []events.Event{ev}
	events.Chain(evs, log[lastOf(log, s1)].Version, events.Hash(log[lastOf(log, s1)]), nil)
	writeRawLog(t, filepath.Join(forged, "nats"), append(slices.Clone(log), evs...))
	_, _, err = cli(t, "audit", "checkpoint", "--data", forged, keys, "--out", next)
	if !errors.Is(err, errChainBroken) {
		t.Errorf("audit checkpoint of a log with a forged event: %v, want errChainBroken", err)
	}
	if _, err := os.Stat(next); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused checkpoint was written: %v", err)
	}

	if _, _, err := cli(t, "audit", "verify", "--data", truncated); !errors.Is(err, errNoAnchor) {
		t.Errorf("audit verify with no keys and no checkpoint: %v, want errNoAnchor", err)
	}
	out = mustCLI(t, "audit", "verify", "--data", truncated, "--plain")
	wantContains(t, "audit verify --plain", out, "intact", "MACs NOT checked")
}

// TestAuditUnkeyedLog: a log written without chain keys (an older weft)
// fails verification with the keys unless --allow-unkeyed, which reports
// how many events carry no MAC.
func TestAuditUnkeyedLog(t *testing.T) {
	_, nodeDir, log, _, _ := nodeLog(t)
	keys := "--keys=" + filepath.Join(nodeDir, events.ChainKeysFile)
	unkeyed := slices.Clone(log)
	for i := range unkeyed {
		unkeyed[i].KeyID, unkeyed[i].MAC = "", ""
	}
	dir := t.TempDir()
	writeRawLog(t, filepath.Join(dir, "nats"), unkeyed)
	_, _, err := cli(t, "audit", "verify", "--data", dir, keys)
	var ce *events.ChainError
	if !errors.As(err, &ce) || ce.Fault != events.FaultUnkeyed || ce.Version != 1 {
		t.Errorf("audit verify of an unkeyed log: %v, want an unkeyed event at version 1", err)
	}
	rep := decodeJSON[verifyReport](t, mustCLI(t, "audit", "verify", "--data", dir, keys, "--allow-unkeyed", "--json"))
	if !rep.OK || rep.Unkeyed != len(log) {
		t.Errorf("audit verify --allow-unkeyed = %+v, want ok with %d unkeyed events", rep, len(log))
	}
}

// TestAuditRotateKey: after weft audit rotate-key a node restarted on the
// same data directory keys its new events under the new key id; the old
// events, and a checkpoint signed with the old key, still verify.
func TestAuditRotateKey(t *testing.T) {
	dir := t.TempDir()
	runDemo := func() {
		n, err := startNode(t.Context(), nodeConfig{dataDir: dir, listen: "127.0.0.1:-1"})
		if err != nil {
			t.Fatal(err)
		}
		demoWaiting(t, n)
		if err := n.close(); err != nil {
			t.Fatal(err)
		}
	}
	runDemo()
	cpFile := filepath.Join(t.TempDir(), "checkpoint.json")
	mustCLI(t, "audit", "checkpoint", "--data", dir, "--out", cpFile)
	old, err := events.ReadChainKeys(filepath.Join(dir, events.ChainKeysFile))
	if err != nil {
		t.Fatal(err)
	}
	out := mustCLI(t, "audit", "rotate-key", "--data", dir)
	keys, err := events.ReadChainKeys(filepath.Join(dir, events.ChainKeysFile))
	if err != nil {
		t.Fatal(err)
	}
	if keys.Current().ID() == old.Current().ID() || keys.Key(old.Current().ID()) == nil {
		t.Fatalf("after rotate-key: current %s (was %s)\n%s", keys.Current().ID(), old.Current().ID(), out)
	}
	runDemo()

	out = mustCLI(t, "audit", "verify", "--data", dir, "--checkpoint", cpFile)
	wantContains(t, "audit verify after a rotation", out, "intact", "in 2 streams", "1 streams at their heads")
	ids := map[string]int{}
	nc, stop := openStoreDir(t, filepath.Join(dir, "nats"))
	defer stop()
	store, err := jetstream.New(t.Context(), nc)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for ev, err := range store.ReadAll(t.Context(), 0) {
		if err != nil {
			t.Fatal(err)
		}
		ids[ev.KeyID]++
	}
	if len(ids) != 2 || ids[old.Current().ID()] == 0 || ids[keys.Current().ID()] == 0 {
		t.Errorf("key ids in the log: %v, want events under %s and %s", ids, old.Current().ID(), keys.Current().ID())
	}
	// The keyring from before the rotation does not know the new key.
	oldFile := filepath.Join(t.TempDir(), "old-keys.json")
	if err := events.WriteChainKeys(oldFile, old); err != nil {
		t.Fatal(err)
	}
	stop()
	_, _, err = cli(t, "audit", "verify", "--data", dir, "--keys", oldFile)
	var ce *events.ChainError
	if !errors.As(err, &ce) || ce.Fault != events.FaultUnknownKey || ce.Got != keys.Current().ID() {
		t.Errorf("audit verify with the keyring from before the rotation: %v, want the new key unknown", err)
	}
}

// TestClusterNodesShareChainKeys: nodes on an external NATS given the same
// keyring file (--chain-keys) key their events with it, and the log of
// both verifies with it; a node started without keys writes unkeyed
// events, which verification refuses.
func TestClusterNodesShareChainKeys(t *testing.T) {
	srv, err := bus.StartServer(bus.ServerConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	keys, err := events.NewChainKeys()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), events.ChainKeysFile)
	if err := events.WriteChainKeys(file, keys); err != nil {
		t.Fatal(err)
	}
	start := func(id, keysFile string) *node {
		n, err := startNode(t.Context(), nodeConfig{natsURL: srv.ClientURL(), cluster: clusterConfig{nodeID: id, chainKeysFile: keysFile}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.close() })
		demoWaiting(t, n)
		return n
	}
	n1, n2 := start("n1", file), start("n2", file)
	out := mustCLI(t, "audit", "verify", "--nats", srv.ClientURL(), "--keys", file)
	wantContains(t, "audit verify of two keyed nodes", out, "intact", "in 2 streams", "MAC checked")

	// The keyed nodes stop, so that the unkeyed one drives its session.
	for _, n := range []*node{n1, n2} {
		if err := n.close(); err != nil {
			t.Fatal(err)
		}
	}
	start("n3", "")
	_, _, err = cli(t, "audit", "verify", "--nats", srv.ClientURL(), "--keys", file)
	var ce *events.ChainError
	if !errors.As(err, &ce) || ce.Fault != events.FaultUnkeyed || ce.Version != 1 {
		t.Errorf("audit verify with an unkeyed node's session: %v, want an unkeyed event at version 1", err)
	}
}
