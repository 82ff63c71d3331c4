package events_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// sameAsOldPath checks data as the data of an event of typ: whatever the
// fast path takes, the old path (encoding/json and checkKeys) takes too,
// with the same value; and Decode accepts and refuses exactly as the old
// path, with the same value or error. It reports whether the fast path
// took data.
func sameAsOldPath(t *testing.T, typ events.Type, data []byte) bool {
	t.Helper()
	old, oldErr := events.DecodeOldPath(typ, data)
	fast, took := events.DecodeFastPath(typ, data)
	if took {
		if oldErr != nil {
			t.Fatalf("fast path took %s data %q, which the old path refuses: %v", typ, data, oldErr)
		}
		if !reflect.DeepEqual(fast, old) {
			t.Fatalf("fast path decoded %s data %q differently (-old +fast):\n%s", typ, data, cmp.Diff(old, fast))
		}
	}
	if events.IsBlobData(data) {
		return took // Decode refuses a blob reference before decoding
	}
	got, err := events.Decode(events.Event{Type: typ, SchemaVersion: 1, Data: data})
	switch {
	case (err == nil) != (oldErr == nil):
		t.Fatalf("Decode of %s data %q: error %v, old path %v", typ, data, err, oldErr)
	case err != nil && err.Error() != oldErr.Error():
		t.Fatalf("Decode of %s data %q: error %q, old path %q", typ, data, err, oldErr)
	case !reflect.DeepEqual(got, old):
		t.Fatalf("Decode of %s data %q (-old +got):\n%s", typ, data, cmp.Diff(old, got))
	}
	return took
}

// goldenData returns the data of every event in the golden histories of
// the projections and of the sample of every type.
func goldenData(t testing.TB) map[events.Type][][]byte {
	t.Helper()
	out := map[events.Type][][]byte{}
	for _, typ := range events.Types() {
		out[typ] = append(out[typ], events.MustNew(typ, samples[typ]).Data)
	}
	files, err := filepath.Glob(filepath.Join("..", "projections", "testdata", "*.events.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("golden histories: %v (%d files)", err, len(files))
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := events.ReadJSONL(bufio.NewReader(f))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			out[ev.Type] = append(out[ev.Type], ev.Data)
		}
	}
	return out
}

// fuzzCorpus returns the inputs of the FuzzDecode corpus (envelopes).
func fuzzCorpus(t testing.TB) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzDecode", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			line = strings.TrimSpace(line)
			if q, ok := strings.CutPrefix(line, "[]byte("); ok {
				s, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				out = append(out, []byte(s))
			}
		}
	}
	return out
}

// TestFastDecodeTakesWhatWeftWrites: the data weft records (the samples,
// the golden histories) decodes on the fast path, as the old path decodes
// it. Without the fast path, every event would take the slow one.
func TestFastDecodeTakesWhatWeftWrites(t *testing.T) {
	for typ, datas := range goldenData(t) {
		for _, data := range datas {
			if !sameAsOldPath(t, typ, data) {
				t.Errorf("fast path does not take %s data %s", typ, data)
			}
		}
	}
}

// TestFastDecodeRefusesAsBefore: data the fast path leaves to the old
// path, and data it takes that is easy to get wrong, decode (or are
// refused) exactly as before.
func TestFastDecodeRefusesAsBefore(t *testing.T) {
	cases := []struct {
		name string
		typ  events.Type
		data string
		fast bool // the fast path takes it
	}{
		{"empty", events.TypeRunResumed, ``, true},
		{"blank", events.TypeRunResumed, " \n\t", true},
		{"unicode space around", events.TypeToolStarted, "\u00a0{\"tool\":\"a\"}\f", false},
		{"spaces everywhere", events.TypeRunWaiting, " { \"reason\" : \"r\" , \"tool_call_ids\" : [ \"a\" , \"b\" ] } ", true},
		{"duplicate key", events.TypeToolStarted, `{"tool":"a","tool":"b","attempt":1}`, false},
		{"duplicate nested struct", events.TypeRunFailed, `{"error":{"message":"a"},"error":{"kind":"k"}}`, false},
		{"duplicate nested key", events.TypeRunFailed, `{"error":{"message":"a","message":"b"}}`, false},
		{"duplicate map key", events.TypeModelResponse, `{"model":"m","usage":{"details":{"a":1,"a":2}}}`, true},
		{"case-folded key", events.TypeToolStarted, `{"tool":"a","Tool":"b"}`, false},
		{"case-folded nested key", events.TypeRunFailed, `{"error":{"Message":"a"}}`, false},
		{"unknown key", events.TypeToolStarted, `{"tool":"a","colour":"red"}`, false},
		{"unknown nested key", events.TypeModelResponse, `{"model":"m","usage":{"requests":1,"cost":2}}`, false},
		{"unknown key in a slice element", events.TypeDecisionRefused, `{"code":"c","message":"m","decisions":[{"id":"1","action":"deny","x":1}]}`, false},
		{"escaped key", events.TypeToolStarted, `{"t\u006fol":"a"}`, false},
		{"escaped string", events.TypeRunFailed, `{"error":{"message":"say \"hi\"\n\u00e9\ud83d\ude00 \ud800"}}`, true},
		{"invalid UTF-8 string", events.TypeRunFailed, "{\"error\":{\"message\":\"a\xffb\"}}", true},
		{"non-ASCII string", events.TypeRunFailed, `{"error":{"message":"déjà 😀"}}`, true},
		{"bad escape", events.TypeRunFailed, `{"error":{"message":"\x"}}`, false},
		{"control character", events.TypeRunFailed, "{\"error\":{\"message\":\"a\tb\"}}", false},
		{"null everywhere", events.TypeModelResponse, `{"model":null,"message":null,"tool_call_ids":null,"usage":null,"attempts":null}`, true},
		{"null struct", events.TypeRunFailed, `{"error":null}`, true},
		{"null time", events.TypeToolsetUnavailable, `{"toolset":"t","retry_at":null}`, true},
		{"null map", events.TypeModelResponse, `{"model":"m","usage":{"details":null}}`, true},
		{"null raw", events.TypeToolReturned, `{"tool":"t","return":null}`, true},
		{"empty slice", events.TypeRunWaiting, `{"reason":"r","tool_call_ids":[]}`, true},
		{"empty map", events.TypeModelResponse, `{"model":"m","usage":{"details":{}}}`, true},
		{"empty struct slice", events.TypeDecisionRefused, `{"code":"c","message":"m","decisions":[]}`, true},
		{"time", events.TypeToolsetUnavailable, `{"toolset":"t","retry_at":"2025-01-02T03:04:05.000000006+02:00"}`, true},
		{"bad time", events.TypeToolsetUnavailable, `{"toolset":"t","retry_at":"2025-01-02"}`, false},
		{"time of another kind", events.TypeToolsetUnavailable, `{"toolset":"t","retry_at":7}`, false},
		{"negative int", events.TypeToolStarted, `{"tool":"t","attempt":-3}`, true},
		{"minus zero", events.TypeToolStarted, `{"tool":"t","attempt":-0}`, true},
		{"largest int", events.TypeUsageSnapshot, `{"usage":{"requests":9223372036854775807,"input_tokens":-9223372036854775808}}`, true},
		{"int overflow", events.TypeUsageSnapshot, `{"usage":{"requests":9223372036854775808}}`, false},
		{"uint64 overflow", events.TypeUsageSnapshot, `{"usage":{"requests":18446744073709551616}}`, false},
		{"int with fraction", events.TypeToolStarted, `{"tool":"t","attempt":1.0}`, false},
		{"int with exponent", events.TypeToolStarted, `{"tool":"t","attempt":1e2}`, false},
		{"int in a string", events.TypeToolStarted, `{"tool":"t","attempt":"1"}`, false},
		{"leading zero", events.TypeToolStarted, `{"tool":"t","attempt":01}`, false},
		{"duration", events.TypeToolRetried, `{"tool":"t","attempt":1,"error":{"message":"m"},"delay_ns":250000000}`, true},
		{"floats", events.TypeToolProgress, `{"tool":"t","progress":0.5,"total":1e3}`, true},
		{"float overflow", events.TypeToolProgress, `{"tool":"t","progress":1e400}`, false},
		{"float tiny", events.TypeToolProgress, `{"tool":"t","progress":1e-400}`, true},
		{"bool", events.TypeToolReturned, `{"tool":"t","return":{},"is_error":true}`, true},
		{"bool as string", events.TypeToolReturned, `{"tool":"t","return":{},"is_error":"true"}`, false},
		{"truncated literal", events.TypeToolReturned, `{"tool":"t","return":{},"is_error":tru}`, false},
		{"literal run on", events.TypeToolReturned, `{"tool":"t","return":{},"is_error":truex}`, false},
		{"nested raw", events.TypeToolReturned, `{"tool":"t","return":{"a":[1,-2.5e+3,{"b":null,"c":[[],{}]},"\u0041"],"d":true}}`, true},
		{"raw with trailing comma", events.TypeToolReturned, `{"tool":"t","return":{"a":1,}}`, false},
		{"raw missing colon", events.TypeToolReturned, `{"tool":"t","return":{"a" 1}}`, false},
		{"raw mismatched", events.TypeToolReturned, `{"tool":"t","return":{"a":[1}]}`, false},
		{"raw deep", events.TypeToolReturned, `{"tool":"t","return":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`, false},
		{"raw as deep as the scanner goes", events.TypeToolReturned, `{"tool":"t","return":` + strings.Repeat("[", 256) + strings.Repeat("]", 256) + `}`, true},
		{"raw too deep for encoding/json", events.TypeToolReturned, `{"tool":"t","return":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, false},
		{"raw invalid UTF-8", events.TypeToolReturned, "{\"tool\":\"t\",\"return\":\"\xff\"}", true},
		{"raw bad number", events.TypeToolReturned, `{"tool":"t","return":-}`, false},
		{"raw number trailing dot", events.TypeToolReturned, `{"tool":"t","return":1.}`, false},
		{"trailing data", events.TypeRunStarted, `{} {}`, false},
		{"trailing garbage", events.TypeRunStarted, `{}x`, false},
		{"trailing comma", events.TypeRunStarted, `{"agent":"a",}`, false},
		{"unclosed", events.TypeRunStarted, `{"agent":"a"`, false},
		{"array", events.TypeRunStarted, `[]`, false},
		{"null", events.TypeRunStarted, `null`, false},
		{"string", events.TypeRunStarted, `"run"`, false},
		{"wrong nested type", events.TypeRunFailed, `{"error":{"message":["x"]}}`, false},
		{"struct as array", events.TypeRunFailed, `{"error":[]}`, false},
		{"slice as object", events.TypeRunWaiting, `{"tool_call_ids":{}}`, false},
		{"slice element of the wrong type", events.TypeRunWaiting, `{"tool_call_ids":["a",1]}`, false},
		{"slice trailing comma", events.TypeRunWaiting, `{"tool_call_ids":["a",]}`, false},
		{"map value of the wrong type", events.TypeModelResponse, `{"model":"m","usage":{"details":{"a":"1"}}}`, false},
		{"map escaped key", events.TypeModelResponse, `{"model":"m","usage":{"details":{"\u0061":1}}}`, false},
		{"blob reference", events.TypeToolReturned, `{"$blob":{"sha256":"00","size":1}}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if took := sameAsOldPath(t, tc.typ, []byte(tc.data)); took != tc.fast {
				t.Errorf("fast path took it: %v, want %v", took, tc.fast)
			}
		})
	}
}

// FuzzFastDecode is the differential test of the fast path: any bytes, as
// the data of every type, decode on the fast path only to what the old
// path decodes them to, and Decode accepts and refuses as the old path.
func FuzzFastDecode(f *testing.F) {
	for _, datas := range goldenData(f) {
		for _, data := range datas {
			f.Add(data)
		}
	}
	for _, b := range fuzzCorpus(f) {
		f.Add(b)
		if ev, err := events.ParseEvent(b); err == nil {
			f.Add([]byte(ev.Data))
		}
	}
	for _, s := range []string{
		`{"tool":"a","tool":"b"}`, `{"tool":"a","Tool":"b"}`, `{"TOOL":"a"}`, `{"error":{"message":"a"},"error":{"kind":"k"}}`,
		`{"usage":{"details":{"a":1,"a":2}}}`, `{"return":null,"tool":"t"}`, `{"retry_at":"2025-01-02T03:04:05Z"}`,
		`{"decisions":[{"id":"1","action":"deny"},{"id":"2","ID":"3"}]}`, `{"progress":-0.0e-0}`, `{"attempt":-0}`,
	} {
		f.Add([]byte(s))
	}
	types := events.Types()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range types {
			sameAsOldPath(t, typ, data)
		}
		if bytes.HasPrefix(data, []byte("{")) {
			// As an envelope's data too: what decoded before decodes.
			var ev events.Event
			if json.Unmarshal(data, &ev) == nil && ev.Type.Known() {
				sameAsOldPath(t, ev.Type, ev.Data)
			}
		}
	})
}
