package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"testing"
)

// FuzzHashCompact checks the hasher's compaction against its definition:
// json.Compact of the data, or the data as it is when Compact refuses it.
// The fast path (no white space outside strings) must never differ.
func FuzzHashCompact(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"a":1}`, `{ "a": 1 }`, "{\"a\":\n1}", `{"s":"two words"}`,
		`{"s":"a \" quote, then a space"}`, `{"s":"\\"} `, `{"s":"\\\\"}`, `["a" ,"b"]`,
		`{"s":"\u0020x"}`, `not json`, `not json at all`, `"unterminated`, `{"a":1}` + "\t",
		`{"s":"<&>"}`, "{\"s\":\"\u2028\"}", `[1, 2,3]`, `{"k":"v"}{"k":"v"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := data
		var buf bytes.Buffer
		if json.Compact(&buf, data) == nil {
			want = buf.Bytes()
		}
		h := &hasher{h: sha256.New()}
		if got := h.compact(data); !bytes.Equal(got, want) {
			t.Fatalf("compact(%q) = %q, want %q", data, got, want)
		}
	})
}
