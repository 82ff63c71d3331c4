package events_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/weft-run/weft/events"
)

// FuzzDecode parses arbitrary bytes as an envelope and decodes its data.
// Every failure must be one of the typed errors, and whatever parses must
// survive a write/read round trip unchanged.
func FuzzDecode(f *testing.F) {
	for _, typ := range events.Types() {
		var buf bytes.Buffer
		events.WriteJSONL(&buf, []events.Event{events.MustNew(typ, samples[typ], events.WithSession("s"))})
		f.Add(buf.Bytes())
	}
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `{"id":"0192d6a0-0000-7000-8000-000000000000"}`,
		`{"id":"0192d6a0-0000-7000-8000-000000000000","type":"run.started","schema_version":1,"time":"2025-01-01T00:00:00Z","data":{"agent":"a"}}`,
		`{"id":"0192d6a0-0000-7000-8000-000000000000","type":"run.started","schema_version":2,"time":"2025-01-01T00:00:00Z","data":{}}`,
		`{"id":"0192d6a0-0000-7000-8000-000000000000","type":"run.nope","schema_version":1,"time":"2025-01-01T00:00:00Z","data":{}}`,
		`{"id":"0192d6a0-0000-7000-8000-000000000000","type":"run.started","schema_version":1,"time":"2025-01-01T00:00:00Z","data":{"agent":1}}`,
		`{"id":"0192d6a0-0000-7000-8000-000000000000","type":"tool.retried","schema_version":1,"time":"2025-01-01T00:00:00+02:00","data":{"tool":"t","attempt":1,"error":{"message":"m"},"delay_ns":5}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := events.ParseEvent(b)
		if err != nil {
			if !errors.Is(err, events.ErrMalformed) {
				t.Fatalf("ParseEvent error %v is not ErrMalformed", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := events.WriteJSONL(&buf, []events.Event{ev}); err != nil {
			t.Fatalf("WriteJSONL of a parsed event: %v", err)
		}
		back, err := events.ReadJSONL(&buf)
		if err != nil {
			t.Fatalf("ReadJSONL of a written event: %v\n%s", err, buf.Bytes())
		}
		// Data is compacted on write.
		want := ev
		want.Data = compact(t, ev.Data)
		if diff := cmp.Diff([]events.Event{want}, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("write/read round trip (-parsed +read):\n%s", diff)
		}

		data, err := events.Decode(ev)
		if err != nil {
			if !errors.Is(err, events.ErrUnknownType) && !errors.Is(err, events.ErrUnknownSchemaVersion) && !errors.Is(err, events.ErrMalformed) &&
				!errors.Is(err, events.ErrUnresolvedBlob) {
				t.Fatalf("Decode error %v is not a typed decoding error", err)
			}
			return
		}
		// Decoded data re-encodes to data that decodes to the same value.
		again, err := events.New(ev.Type, data)
		if err != nil {
			t.Fatalf("New from decoded data: %v", err)
		}
		data2, err := events.Decode(again)
		if err != nil {
			t.Fatalf("Decode of re-encoded data %s: %v", again.Data, err)
		}
		again2 := events.MustNew(ev.Type, data2)
		if !bytes.Equal(again.Data, again2.Data) {
			t.Fatalf("re-encoding is not stable: %s then %s", again.Data, again2.Data)
		}
	})
}

// FuzzParseBlobData: a blob reference has one encoding. Whatever parses
// re-encodes to the same bytes; whatever looks like a reference and does
// not parse is ErrBlobCorrupt.
func FuzzParseBlobData(f *testing.F) {
	ref := events.RefOf([]byte("x"))
	for _, seed := range []string{string(ref.EventData()), `{"$blob":{"sha256":"` + ref.SHA256 + `","size":1 }}`,
		`{"$blob":{"sha256":"","size":0}}`, `{"tool":"t"}`, `{"$blob":null}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok, err := events.ParseBlobData(b)
		switch {
		case !ok && err != nil:
			t.Fatalf("not a reference, yet an error: %v", err)
		case ok && err != nil && !errors.Is(err, events.ErrBlobCorrupt):
			t.Fatalf("error %v is not ErrBlobCorrupt", err)
		case ok && err == nil && !bytes.Equal(got.EventData(), b):
			t.Fatalf("%q parsed to %v, which encodes as %q", b, got, got.EventData())
		}
	})
}

// compact returns JSON text without insignificant space.
func compact(t *testing.T, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact %q: %v", b, err)
	}
	return buf.Bytes()
}
