package memstore_test

import (
	"errors"
	"testing"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/events/memstore"
)

// TestKeyedChain: a store with chain keys keys every event it appends
// (whatever key id or MAC the caller set), its log verifies with the keys,
// and the log of a store without them is refused as unkeyed.
func TestKeyedChain(t *testing.T) {
	keys, err := events.NewChainKeys()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	keyed, plain := memstore.New(memstore.WithChainKeys(keys)), memstore.New()
	t.Cleanup(func() { keyed.Close(); plain.Close() })
	for _, s := range []*memstore.Store{keyed, plain} {
		for _, stream := range []string{"a", "b", "a"} {
			ev := events.Event{Type: events.TypeToolProgress, KeyID: "forged", MAC: "forged"}
			if _, err := s.Append(ctx, stream, events.Any, ev, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	for ev, err := range keyed.ReadAll(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.KeyID != keys.Current().ID() || ev.MAC != keys.Current().MAC(ev) {
			t.Errorf("event %s v%d: key id %q, MAC %q; want the MAC under %s", ev.Stream, ev.Version, ev.KeyID, ev.MAC, keys.Current().ID())
		}
	}
	res, err := events.VerifyStreams(keyed.ReadAll(ctx, 0), events.VerifyOptions{Keys: keys})
	if err != nil || res.Events != 6 || res.Unkeyed != 0 {
		t.Errorf("keyed store verified with its keys = %+v, %v; want 6 keyed events", res, err)
	}
	_, err = events.VerifyStreams(plain.ReadAll(ctx, 0), events.VerifyOptions{Keys: keys})
	var ce *events.ChainError
	if !errors.As(err, &ce) || ce.Fault != events.FaultUnkeyed || ce.Version != 1 {
		t.Errorf("unkeyed store verified with keys: %v, want an unkeyed event at version 1", err)
	}
}
