package projections_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/projections"
)

// poisonedLog is a log as a store that holds poison yields it: a message
// that is not a weft event comes as a *events.PoisonError in the
// sequence, which goes on after it. (No store takes poison in by Append.)
type poisonedLog struct {
	items []logItem
}

type logItem struct {
	ev  events.Event
	err error
}

func (l *poisonedLog) ReadStream(context.Context, string, uint64) ([]events.Event, error) {
	return nil, errors.New("not used")
}

func (l *poisonedLog) ReadAll(_ context.Context, after uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for _, it := range l.items {
			if it.ev.Position > after && !yield(it.ev, it.err) {
				return
			}
		}
	}
}

func (l *poisonedLog) Subscribe(ctx context.Context, after uint64) iter.Seq2[events.Event, error] {
	return l.ReadAll(ctx, after)
}

// Poison never stops a catch-up: a raw message that is not an event, an
// event whose data does not decode and one of a type outside the catalogue
// are quarantined (recorded once each, the session marked damaged), and
// every other event is applied, to the end of the log.
func TestRunnerQuarantinesPoison(t *testing.T) {
	good := loadHistory(t, histories[0])
	session, stream := good[0].SessionID, good[0].Stream

	// The log: the history with three kinds of poison spliced in after
	// its first event, positions renumbered.
	raw := &events.PoisonError{Stream: stream, Reason: "message is not a weft event", Err: events.ErrMalformed}
	badData := good[0]
	badData.ID, badData.Data = uuid.New(), json.RawMessage(`{"agent":7}`)
	unknown := good[0]
	unknown.ID, unknown.Type = uuid.New(), "run.startd"
	var items []logItem
	items = append(items, logItem{ev: good[0]}, logItem{ev: events.Event{Stream: stream}, err: &events.Error{Op: "read all", Err: raw}},
		logItem{ev: badData}, logItem{ev: unknown})
	for _, ev := range good[1:] {
		items = append(items, logItem{ev: ev})
	}
	for i := range items {
		items[i].ev.Position = uint64(i + 1)
	}
	raw.Position = 2
	last := uint64(len(items))

	projs := views(good)
	r := projections.NewRunner(&poisonedLog{items: items}, projs)
	pr, err := r.CatchUp(t.Context())
	if err != nil {
		t.Fatalf("CatchUp over a poisoned log: %v, want it to go on", err)
	}
	if pr.Read != last || pr.Position != last {
		t.Errorf("progress %+v, want %d events read to position %d", pr, last, last)
	}
	for _, p := range projs {
		if p.Checkpoint() != last {
			t.Errorf("%s checkpoint = %d, want %d (past the poison)", p.Name(), p.Checkpoint(), last)
		}
	}
	positions := func(ps []*events.PoisonError) []uint64 {
		var out []uint64
		for _, p := range ps {
			out = append(out, p.Position)
		}
		return out
	}
	if diff := cmp.Diff([]uint64{2, 3, 4}, positions(r.Poison())); diff != "" {
		t.Errorf("quarantined positions (-want +got):\n%s", diff)
	}
	for _, p := range r.Poison() {
		if !errors.Is(p, events.ErrPoison) || p.Stream != stream {
			t.Errorf("poison %v: want ErrPoison in stream %q", p, stream)
		}
	}
	if p := r.Poison()[1]; !errors.Is(p, events.ErrMalformed) || p.ID != badData.ID || p.Version != badData.Version {
		t.Errorf("poison of the bad data = %+v, want ErrMalformed naming its id and version", p)
	}
	if p := r.Poison()[2]; !errors.Is(p, events.ErrUnknownType) {
		t.Errorf("poison of the unknown type = %v, want ErrUnknownType", p)
	}

	// The archive says the session is damaged, and still what the sound
	// events say: the same as without the poison.
	arch := projs[0].(*projections.Archive)
	got, err := arch.Session(session)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]uint64{2, 3, 4}, positions(got.Damaged)); diff != "" {
		t.Errorf("damaged (-want +got):\n%s", diff)
	}
	sound := projections.NewArchive()
	if _, err := projections.NewRunner(newStore(t, good), []projections.Projection{sound}).CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	want, _ := sound.Session(session)
	got.Damaged = nil
	if diff := cmp.Diff(want.Runs, got.Runs); diff != "" {
		t.Errorf("runs of the damaged session (-sound +damaged):\n%s", diff)
	}

	// A second catch-up from before the poison records it once.
	r2 := projections.NewRunner(&poisonedLog{items: items}, []projections.Projection{arch})
	arch.Reset()
	if _, err := r2.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.CatchUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, _ = arch.Session(session)
	if len(got.Damaged) != 3 || len(r2.Poison()) != 3 {
		t.Errorf("after two catch-ups: %d damaged, %d quarantined, want 3 each", len(got.Damaged), len(r2.Poison()))
	}
}
