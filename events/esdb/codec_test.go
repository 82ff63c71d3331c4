package esdb

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

func TestToRevision(t *testing.T) {
	cases := []struct {
		name     string
		expected events.ExpectedVersion
		want     esdb.ExpectedRevision
	}{
		{"any", events.Any, esdb.Any{}},
		{"no stream", events.NoStream, esdb.NoStream{}},
		{"exact zero", events.Exact(0), esdb.NoStream{}},
		{"exact one", events.Exact(1), esdb.Revision(0)},
		{"exact forty-two", events.Exact(42), esdb.Revision(41)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := toRevision(tc.expected); got != tc.want {
				t.Errorf("toRevision(%v) = %#v, want %#v", tc.expected, got, tc.want)
			}
		})
	}
}

func TestCodecRoundTrip(t *testing.T) {
	ev := events.Event{
		ID: uuid.Must(uuid.NewV7()), Stream: "s", Type: events.TypeRunStarted, SchemaVersion: 1,
		Time: time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)), SessionID: "a", RunID: "b",
		ToolCallID: "c", CorrelationID: "d", CausationID: "e", Data: json.RawMessage(`{"k":1}`),
	}
	d, err := toEventData(ev, "append-1")
	if err != nil {
		t.Fatal(err)
	}
	rec := &esdb.RecordedEvent{
		EventID: d.EventID, EventType: d.EventType, ContentType: contentTypeJSON, StreamID: "prefix-s",
		EventNumber: 6, Position: esdb.Position{Commit: 99, Prepare: 99}, Data: d.Data, UserMetadata: d.Metadata,
	}
	got, appendID, err := fromRecorded(rec, "s")
	if err != nil {
		t.Fatal(err)
	}
	want := ev
	want.Version, want.Position = 7, 100
	if diff := cmp.Diff(want, got); diff != "" || appendID != "append-1" {
		t.Errorf("round trip (-want +got):\n%s\nappend id %q", diff, appendID)
	}
	rec.Position = esdb.Position{Commit: unknownPosition, Prepare: unknownPosition}
	if got, _, _ := fromRecorded(rec, "s"); got.Position != 0 {
		t.Errorf("unknown position decoded as %d, want 0", got.Position)
	}
}

// FuzzFromRecorded: decoding never panics, and whatever it refuses is
// ErrMalformed.
func FuzzFromRecorded(f *testing.F) {
	f.Add("application/json", []byte(`{"schema_version":1,"time":"2025-01-01T00:00:00Z","append_id":"x"}`), []byte(`{}`))
	f.Add("application/octet-stream", []byte(`{}`), []byte{0xff})
	f.Add("application/json", []byte(`{"append_id":""}`), []byte(nil))
	f.Add("application/json", []byte(`{"time":"yesterday","append_id":"x"}`), []byte(`1`))
	f.Fuzz(func(t *testing.T, contentType string, meta, data []byte) {
		rec := &esdb.RecordedEvent{EventID: uuid.New(), EventType: "t", ContentType: contentType, StreamID: "s", Data: data, UserMetadata: meta}
		ev, _, err := fromRecorded(rec, "s")
		if err != nil {
			if !errors.Is(err, events.ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		if ev.ID != rec.EventID || ev.Version != 1 || string(ev.Data) != string(data) {
			t.Fatalf("decoded %+v from %+v", ev, rec)
		}
	})
}
