package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// poisonDataDir writes poison into the stopped node's log in dir, past the
// store (as a hand-written message or an older version would): a raw "not
// json" on the subject of session, one on a session with no other events
// ("ghost"), and a well-formed envelope of a running run whose data does
// not decode ("stuck"). It returns the positions of the three.
func poisonDataDir(t *testing.T, dir, session string) []uint64 {
	t.Helper()
	nc, stop := openStoreDir(t, filepath.Join(dir, "nats"))
	defer stop()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stuck := events.Event{ID: uuid.Must(uuid.NewV7()), Stream: events.SessionStream("stuck"), Version: 1, Type: events.TypeRunStarted,
		SchemaVersion: 1, Time: time.Now().UTC(), SessionID: "stuck", RunID: "r1", Data: []byte(`{"agent":7}`)}
	stuckBody, err := events.AppendJSON(nil, &stuck, false)
	if err != nil {
		t.Fatal(err)
	}
	var positions []uint64
	for _, m := range []struct {
		stream string
		typ    events.Type
		body   []byte
	}{
		{events.SessionStream(session), events.TypeToolReturned, []byte("not json")},
		{events.SessionStream("ghost"), events.TypeRunStarted, []byte("not json")},
		{stuck.Stream, stuck.Type, stuckBody},
	} {
		subject, err := bus.Default.LogIngest(m.stream, string(m.typ))
		if err != nil {
			t.Fatal(err)
		}
		ack, err := js.Publish(t.Context(), subject, m.body)
		if err != nil {
			t.Fatal(err)
		}
		positions = append(positions, ack.Sequence)
	}
	return positions
}

// Poison in a stopped node's log stops nothing: weft sessions lists the
// damaged sessions with their poison, weft approvals still lists the
// pending approval, weft audit verify names each poison message and exits
// with status 1, and weft serve starts, reporting the damaged running
// session it does not carry on. Every command is bounded.
func TestPoisonInTheLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	n, err := startNode(ctx, nodeConfig{dataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := n.startDemoRun(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.close(); err != nil {
		t.Fatal(err)
	}
	positions := poisonDataDir(t, dir, sess.ID())

	rows := decodeJSON[[]sessionRow](t, mustCLI(t, "sessions", "--data", dir, "--json"))
	damaged := map[string]uint64{}
	for _, r := range rows {
		for _, p := range r.Damaged {
			damaged[r.SessionID] = p.Position
		}
	}
	want := map[string]uint64{sess.ID(): positions[0], "ghost": positions[1], "stuck": positions[2]}
	for id, pos := range want {
		if damaged[id] != pos {
			t.Errorf("sessions --json: session %s damaged at %d, want %d (rows %+v)", id, damaged[id], pos, rows)
		}
	}
	wantContains(t, "sessions", mustCLI(t, "sessions", "--data", dir), "DAMAGED "+sess.ID()+": poison event at position", "DAMAGED stuck:")

	items := decodeJSON[[]projections.QueueItem](t, mustCLI(t, "approvals", "--data", dir, "--json"))
	if len(items) != 1 || items[0].SessionID != sess.ID() {
		t.Errorf("approvals --json over the poisoned log = %+v, want the demo's approval", items)
	}

	// The hand-written session "stuck" carries no MAC: --allow-unkeyed
	// accepts it (its stream has no keyed event), so what is left to
	// report is the poison.
	out, _, err := cli(t, "audit", "verify", "--data", dir, "--allow-unkeyed")
	if !errors.Is(err, errPoison) {
		t.Errorf("audit verify: %v, want errPoison\n%s", err, out)
	}
	for _, pos := range positions {
		wantContains(t, "audit verify", out, "POISON poison event at position "+itoa(int(pos)))
	}
	rep := decodeJSON[verifyReport](t, func() string {
		out, _, _ := cli(t, "audit", "verify", "--data", dir, "--allow-unkeyed", "--json")
		return out
	}())
	if rep.OK || len(rep.Quarantined) != 3 || rep.Broken != nil {
		t.Errorf("audit verify --json = %+v, want not OK with 3 quarantined and no broken chain", rep)
	}

	var logged bytes.Buffer
	n, err = startNode(ctx, nodeConfig{dataDir: dir, obs: &observe{log: slog.New(slog.NewTextHandler(&logged, nil))}})
	if err != nil {
		t.Fatalf("a node on the poisoned log: %v, want it to start", err)
	}
	defer n.close()
	// The HITL queue's fold refuses the stuck run's start: the node says so.
	wantContains(t, "the node's log", logged.String(), "hitl queue: an event is quarantined", "session=stuck")
	if len(n.damaged) != 1 || n.damaged[0].ID != "stuck" || !errors.Is(n.damaged[0].Err, events.ErrPoison) {
		t.Errorf("recover: damaged %+v, want the running session stuck", n.damaged)
	}
	if !strings.Contains(n.damaged[0].Err.Error(), "position "+itoa(int(positions[2]))) {
		t.Errorf("recover: %v, want it to name the poison's position %d", n.damaged[0].Err, positions[2])
	}
}
