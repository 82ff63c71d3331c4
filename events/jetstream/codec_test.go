package jetstream

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/weft-run/weft/events"
)

// reflectEncode is the reference encoding: json.Marshal of the wire
// envelope, with the data spliced in verbatim.
func reflectEncode(t testing.TB, ev *events.Event) []byte {
	t.Helper()
	w := wireEvent{ID: ev.ID, Stream: ev.Stream, Version: ev.Version, Type: ev.Type, SchemaVersion: ev.SchemaVersion,
		Time: ev.Time, SessionID: ev.SessionID, RunID: ev.RunID, ToolCallID: ev.ToolCallID,
		CorrelationID: ev.CorrelationID, CausationID: ev.CausationID, PrevHash: ev.PrevHash, KeyID: ev.KeyID, MAC: ev.MAC}
	b, err := json.Marshal(&w)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Data) == 0 {
		return b
	}
	return append(append(append(b[:len(b)-1:len(b)-1], `,"data":`...), ev.Data...), '}')
}

func TestEncodeEvent(t *testing.T) {
	id := uuid.MustParse("01890a5d-ac96-774b-bcce-b302099a8057")
	tests := []struct {
		name string
		ev   events.Event
	}{
		{"minimal", events.Event{ID: id, Stream: "session-1", Version: 1, Type: events.TypeRunStarted}},
		{"every field", events.Event{ID: id, Stream: "session-1", Version: 7, Type: events.TypeToolReturned, SchemaVersion: 2,
			Time: time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.FixedZone("x", -3600)), SessionID: "1", RunID: "r",
			ToolCallID: "c", CorrelationID: "corr", CausationID: "cause", PrevHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			KeyID: "0123456789abcdef", MAC: "3a6eb0790f39ac87c94f3856b2dd2c5d110e6811602261a9a923d3bb23adc8b7",
			Data: json.RawMessage(`{"tool":"x","n":1}`)}},
		{"strings to escape", events.Event{ID: id, Stream: "session-a\"b", Version: 2, Type: events.TypeRunStarted,
			SessionID: "<a&b>\\", RunID: "é\x01", ToolCallID: "\u2028", PrevHash: "<\"&>"}},
		{"data kept verbatim", events.Event{ID: id, Stream: "s", Version: 3, Type: events.TypeRunStarted, Data: json.RawMessage(`{ "a" : "<b>" }`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := encodeEvent(&tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(reflectEncode(t, &tc.ev)), string(got)); d != "" {
				t.Errorf("encodeEvent (-json.Marshal +got):\n%s", d)
			}
			back, err := decodeEvent(got, 9)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.ev
			want.Position = 9
			if d := cmp.Diff(want, back, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); d != "" {
				t.Errorf("decodeEvent(encodeEvent) (-want +got):\n%s", d)
			}
		})
	}
	bad := events.Event{ID: id, Stream: "s", Version: 1, Type: events.TypeRunStarted, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := encodeEvent(&bad); err == nil {
		t.Error("encodeEvent accepted a time JSON cannot encode")
	}
}

// FuzzEncodeEvent checks that encodeEvent writes what json.Marshal writes
// for any ids, stream name and type.
func FuzzEncodeEvent(f *testing.F) {
	f.Add("session-1", "run.started", "s", "r", "c", "", uint64(1), int64(0))
	f.Add("a\"<>&\\", "x", "é", "\u2028", "\x00\xff", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", uint64(1<<63), int64(1700000000123456789))
	f.Fuzz(func(t *testing.T, stream, typ, session, run, call, prev string, version uint64, nanos int64) {
		ev := events.Event{ID: uuid.New(), Stream: stream, Version: version, Type: events.Type(typ), SessionID: session,
			RunID: run, ToolCallID: call, PrevHash: prev, Time: time.Unix(0, nanos).UTC()}
		got, err := encodeEvent(&ev)
		if err != nil {
			t.Fatal(err)
		}
		if want := reflectEncode(t, &ev); string(want) != string(got) {
			t.Fatalf("encodeEvent = %s\njson.Marshal = %s", got, want)
		}
	})
}
