package events_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// newKeys returns a fresh keyring.
func newKeys(t *testing.T) *events.ChainKeys {
	t.Helper()
	ks, err := events.NewChainKeys()
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// keyedStream returns n events of stream after prefix (the stream's
// earlier events), chained and keyed with key as a store does (key nil:
// unkeyed).
func keyedStream(t *testing.T, stream string, prefix []events.Event, n int, key *events.ChainKey) []events.Event {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	evs := make([]events.Event, n)
	for i := range evs {
		v := len(prefix) + i
		evs[i] = events.Event{
			ID:     uuid.MustParse(fmt.Sprintf("01900000-0000-7000-8%03d-%012d", len(stream), v)),
			Stream: stream, Type: events.TypeToolProgress, SchemaVersion: 1,
			Time: at.Add(time.Duration(v) * time.Millisecond), SessionID: "s",
			Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, v)),
		}
	}
	prev := ""
	if len(prefix) > 0 {
		prev = events.Hash(prefix[len(prefix)-1])
	}
	events.Chain(evs, uint64(len(prefix)), prev, key)
	return append(slices.Clone(prefix), evs...)
}

func seqOf(evs []events.Event) func(func(events.Event, error) bool) {
	return func(yield func(events.Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

type fault struct {
	Stream  string
	Version uint64
	Fault   events.ChainFault
}

func faultOf(err error) *fault {
	var ce *events.ChainError
	if !errors.As(err, &ce) {
		return nil
	}
	return &fault{ce.Stream, ce.Version, ce.Fault}
}

// TestKeyedChainAttacks: what an attacker who can write the log but does
// not hold the chain key does, and what the keyed verification reports.
func TestKeyedChainAttacks(t *testing.T) {
	keys, other := newKeys(t), newKeys(t)
	good := keyedStream(t, "a", nil, 4, keys.Current())
	// forge appends an event the way an attacker would: the right version
	// and plain prev_hash, keyed with key (nil: no MAC).
	forge := func(key *events.ChainKey) []events.Event { return keyedStream(t, "a", good, 1, key) }

	tests := []struct {
		name   string
		log    []events.Event
		keys   *events.ChainKeys
		allow  bool
		want   *fault
		unkeyd int
	}{
		{"intact", good, keys, false, nil, 0},
		{"forged event with the right prev_hash, no MAC", forge(nil), keys, false, &fault{"a", 5, events.FaultUnkeyed}, 0},
		{"forged event with the right prev_hash, no MAC, unkeyed allowed", forge(nil), keys, true, &fault{"a", 5, events.FaultUnkeyed}, 0},
		{"forged event keyed by another keyring", forge(other.Current()), keys, false, &fault{"a", 5, events.FaultUnknownKey}, 0},
		{"forged event with a made-up MAC under the real key id", func() []events.Event {
			evs := forge(other.Current())
			evs[4].KeyID = keys.Current().ID()
			return evs
		}(), keys, false, &fault{"a", 5, events.FaultBadMAC}, 0},
		{"whole log re-chained and re-keyed with another key", keyedStream(t, "a", nil, 4, other.Current()), keys, false, &fault{"a", 1, events.FaultUnknownKey}, 0},
		{"altered event, the chain after it recomputed", func() []events.Event {
			evs := slices.Clone(good)
			evs[1].Data = json.RawMessage(`{"n":99}`)
			events.Chain(evs[1:], 1, events.Hash(evs[0]), nil)
			for i := 1; i < len(evs); i++ {
				evs[i].KeyID, evs[i].MAC = good[i].KeyID, good[i].MAC
			}
			return evs
		}(), keys, false, &fault{"a", 2, events.FaultBadMAC}, 0},
		{"MAC stripped from the last event, checked without keys", func() []events.Event {
			evs := slices.Clone(good)
			evs[3].KeyID, evs[3].MAC = "", ""
			return evs
		}(), nil, false, &fault{"a", 4, events.FaultUnkeyed}, 0},
		{"unkeyed log, keys required", keyedStream(t, "a", nil, 3, nil), keys, false, &fault{"a", 1, events.FaultUnkeyed}, 0},
		{"unkeyed log, unkeyed allowed", keyedStream(t, "a", nil, 3, nil), keys, true, nil, 3},
		{"unkeyed prefix, then keyed (keys added to an old log)", keyedStream(t, "a", keyedStream(t, "a", nil, 2, nil), 2, keys.Current()), keys, true, nil, 2},
		{"unkeyed log, plain check", keyedStream(t, "a", nil, 3, nil), nil, false, nil, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := events.VerifyStreams(seqOf(tc.log), events.VerifyOptions{Keys: tc.keys, AllowUnkeyed: tc.allow})
			if diff := cmp.Diff(tc.want, faultOf(err)); diff != "" {
				t.Errorf("fault (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err != nil && tc.want == nil {
				t.Errorf("VerifyStreams: %v", err)
			}
			if tc.want == nil && res.Unkeyed != tc.unkeyd {
				t.Errorf("Unkeyed = %d, want %d", res.Unkeyed, tc.unkeyd)
			}
		})
	}
}

// TestChainErrorHidesTheMAC: a wrong MAC's error shows the MAC found, never
// the one the key makes (which would let the forger insert it).
func TestChainErrorHidesTheMAC(t *testing.T) {
	keys := newKeys(t)
	evs := keyedStream(t, "a", nil, 2, keys.Current())
	want := evs[1].MAC
	evs[1].MAC = "00"
	_, err := events.VerifyStreams(seqOf(evs), events.VerifyOptions{Keys: keys})
	if f := faultOf(err); f == nil || f.Fault != events.FaultBadMAC {
		t.Fatalf("VerifyStreams = %v, want a wrong mac", err)
	}
	if b, _ := json.Marshal(err); strings.Contains(err.Error(), want) || strings.Contains(string(b), want) {
		t.Errorf("the error shows the right MAC: %v", err)
	}
}

// TestCheckpointAnchor: a log checked against a checkpoint of its heads,
// by a verifier with the keys and by one with only the public keyring
// (which checks no MACs): truncation, deletion, replacement and a changed
// last event are all reported.
func TestCheckpointAnchor(t *testing.T) {
	keys, other := newKeys(t), newKeys(t)
	a := keyedStream(t, "a", nil, 4, keys.Current())
	b := keyedStream(t, "b", nil, 2, keys.Current())
	log := append(slices.Clone(a), b...)
	res, err := events.VerifyStreams(seqOf(log), events.VerifyOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := events.NewCheckpoint(res.Heads, keys.Current(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Verify(keys.Public()); err != nil {
		t.Fatalf("a fresh checkpoint: %v", err)
	}
	changedLast := func() []events.Event {
		evs := slices.Clone(log)
		evs[3].Data = json.RawMessage(`{"n":"changed"}`) // a's last event
		return evs
	}()
	// replaced is stream a as someone rewrote it (one event's data
	// changed), chained afresh and keyed with key.
	replaced := func(key *events.ChainKey) []events.Event {
		evs := slices.Clone(a)
		evs[1].Data = json.RawMessage(`{"n":"rewritten"}`)
		events.Chain(evs, 0, "", key)
		return evs
	}
	tests := []struct {
		name string
		log  []events.Event
		keys *events.ChainKeys // nil: a reader with the public keyring only
		want *fault
	}{
		{"intact", log, keys, nil},
		{"intact, reader", log, nil, nil},
		{"events appended after the checkpoint", append(slices.Clone(log), keyedStream(t, "b", b, 2, keys.Current())[2:]...), keys, nil},
		{"tail truncated", slices.Concat(a[:2], b), keys, &fault{"a", 4, events.FaultTruncated}},
		{"tail truncated, reader", slices.Concat(a[:2], b), nil, &fault{"a", 4, events.FaultTruncated}},
		{"stream deleted", b, keys, &fault{"a", 4, events.FaultStreamMissing}},
		{"log deleted", nil, keys, &fault{"a", 4, events.FaultStreamMissing}},
		{"changed last event, reader", changedLast, nil, &fault{"a", 4, events.FaultCheckpointHash}},
		{"changed last event, with keys", changedLast, keys, &fault{"a", 4, events.FaultBadMAC}},
		{"log replaced by one keyed with another key, reader", slices.Concat(replaced(other.Current()), b), nil, &fault{"a", 4, events.FaultCheckpointHash}},
		{"log replaced by one keyed with another key, with keys", slices.Concat(replaced(other.Current()), b), keys, &fault{"a", 1, events.FaultUnknownKey}},
		{"log replaced by an unkeyed one, reader", slices.Concat(replaced(nil), b), nil, &fault{"a", 4, events.FaultCheckpointHash}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := events.VerifyStreams(seqOf(tc.log), events.VerifyOptions{Keys: tc.keys, Checkpoint: cp})
			if diff := cmp.Diff(tc.want, faultOf(err)); diff != "" {
				t.Errorf("fault (-want +got):\n%s\nerror: %v", diff, err)
			}
			if tc.want == nil && (err != nil || res.Anchored != 2) {
				t.Errorf("VerifyStreams = %+v, %v; want both streams anchored", res, err)
			}
		})
	}
	// A session's own check ignores the checkpoint's other streams.
	res, err = events.VerifyStreams(seqOf(b), events.VerifyOptions{Keys: keys, Checkpoint: cp, Include: func(s string) bool { return s == "b" }})
	if err != nil || res.Anchored != 1 {
		t.Errorf("stream b alone against the checkpoint = %+v, %v; want it anchored", res, err)
	}
}

// TestCheckpointTampered: a checkpoint changed after it was signed, or
// signed by a key the keyring does not hold, is refused.
func TestCheckpointTampered(t *testing.T) {
	keys, other := newKeys(t), newKeys(t)
	heads := []events.StreamHead{
		{Stream: "a", Version: 4, Hash: fmt.Sprintf("%064x", 1)},
		{Stream: "b", Version: 2, Hash: fmt.Sprintf("%064x", 2)},
	}
	cp, err := events.NewCheckpoint(heads, keys.Current(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	othercp, err := events.NewCheckpoint(heads, other.Current(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(cp.Encode(), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	streams := func(m map[string]any) []any { return m["streams"].([]any) }
	tests := map[string][]byte{
		"version lowered (to hide a truncation)": edit(func(m map[string]any) { streams(m)[0].(map[string]any)["version"] = 2 }),
		"hash changed":                           edit(func(m map[string]any) { streams(m)[1].(map[string]any)["hash"] = fmt.Sprintf("%064x", 3) }),
		"stream removed (to hide a deletion)":    edit(func(m map[string]any) { m["streams"] = streams(m)[1:] }),
		"time changed":                           edit(func(m map[string]any) { m["time"] = "2020-01-01T00:00:00Z" }),
		"key id changed":                         edit(func(m map[string]any) { m["key_id"] = other.Current().ID() }),
		"signed by another key":                  othercp.Encode(),
		"unknown field":                          edit(func(m map[string]any) { m["note"] = "x" }),
		"not JSON":                               []byte("not json"),
	}
	if _, err := events.DecodeCheckpoint(cp.Encode()); err != nil {
		t.Fatalf("the untampered checkpoint: %v", err)
	}
	for name, b := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := events.DecodeCheckpoint(b)
			if err == nil {
				err = c.Verify(keys.Public())
			}
			if !errors.Is(err, events.ErrBadCheckpoint) {
				t.Errorf("a tampered checkpoint: %v, want ErrBadCheckpoint", err)
			}
		})
	}
}

// TestChainKeyRotation: after a rotation new events are keyed under the new
// key id, and the old events, and checkpoints signed with the old key,
// still verify with the rotated keyring.
func TestChainKeyRotation(t *testing.T) {
	old := newKeys(t)
	before := keyedStream(t, "a", nil, 2, old.Current())
	heads, err := events.VerifyStreams(seqOf(before), events.VerifyOptions{Keys: old})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := events.NewCheckpoint(heads.Heads, old.Current(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := old.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Current().ID() == old.Current().ID() || rotated.Key(old.Current().ID()) == nil {
		t.Fatalf("rotated keyring: current %s, old key kept: %v", rotated.Current().ID(), rotated.Key(old.Current().ID()) != nil)
	}
	log := keyedStream(t, "a", before, 2, rotated.Current())
	if log[3].KeyID != rotated.Current().ID() || log[1].KeyID != old.Current().ID() {
		t.Errorf("key ids %q (old event), %q (new event), want %s and %s", log[1].KeyID, log[3].KeyID, old.Current().ID(), rotated.Current().ID())
	}
	if err := cp.Verify(rotated.Public()); err != nil {
		t.Errorf("the old key's checkpoint with the rotated keyring: %v", err)
	}
	if _, err := events.VerifyStreams(seqOf(log), events.VerifyOptions{Keys: rotated, Checkpoint: cp}); err != nil {
		t.Errorf("old and new events with the rotated keyring: %v", err)
	}
	// The old keyring does not know the new key: the new events are its.
	_, err = events.VerifyStreams(seqOf(log), events.VerifyOptions{Keys: old})
	if diff := cmp.Diff(&fault{"a", 3, events.FaultUnknownKey}, faultOf(err)); diff != "" {
		t.Errorf("the old keyring over new events (-want +got):\n%s", diff)
	}
}
