package projections

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/events"
)

// jsonReturn is how parseReturn read a return before fastReturn.
func jsonReturn(raw []byte) returnInfo {
	var ri returnInfo
	_ = json.Unmarshal(raw, &ri)
	return ri
}

// sameReturn checks fastReturn of raw against encoding/json and reports
// whether fastReturn took it.
func sameReturn(t *testing.T, raw []byte) bool {
	t.Helper()
	got, ok := fastReturn(raw)
	if want := jsonReturn(raw); ok && !cmp.Equal(got, want) {
		t.Fatalf("fastReturn(%q) = %+v, encoding/json reads %+v", raw, got, want)
	}
	if got, want := parseReturn(raw), jsonReturn(raw); !cmp.Equal(got, want) {
		t.Fatalf("parseReturn(%q) = %+v, encoding/json reads %+v", raw, got, want)
	}
	return ok
}

// sameSplit checks splitArray of raw against encoding/json and reports
// whether splitArray took it.
func sameSplit(t *testing.T, raw []byte) bool {
	t.Helper()
	got, ok := splitArray(raw)
	var want []json.RawMessage
	err := json.Unmarshal(raw, &want)
	if ok && (err != nil || !cmp.Equal(got, want) || (got == nil) != (want == nil)) {
		t.Fatalf("splitArray(%q) = %q, encoding/json gives %q, %v", raw, got, want, err)
	}
	return ok
}

// goldenPayloads returns the tool returns and the model request messages
// of the golden histories.
func goldenPayloads(t testing.TB) (returns, messages [][]byte) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.events.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("golden histories: %v", err)
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
			switch d, _ := events.Decode(ev); d := d.(type) {
			case events.ToolReturned:
				returns = append(returns, d.Return)
			case events.DeferredResolved:
				returns = append(returns, d.Return)
			case events.ModelRequest:
				messages = append(messages, d.Messages)
			}
		}
	}
	return returns, messages
}

// TestFastPathsTakeWhatWeftWrites: the returns and messages weft records
// are read on the fast paths, as encoding/json reads them.
func TestFastPathsTakeWhatWeftWrites(t *testing.T) {
	returns, messages := goldenPayloads(t)
	for _, r := range returns {
		if !sameReturn(t, r) {
			t.Errorf("fastReturn does not take %s", r)
		}
	}
	for _, m := range messages {
		if !sameSplit(t, m) {
			t.Errorf("splitArray does not take %s", m)
		}
	}
}

func TestFastReturn(t *testing.T) {
	cases := []struct {
		name, raw string
		fast      bool
	}{
		{"canonical", `{"call_id":"d1","kind":"approval_required","is_error":false,"content":"x","control":{"message":"m","reason":"deploy","metadata":{"risk":"high"}}}`, true},
		{"error", `{"kind":"execution","is_error":true,"content":[{"a":["}",{"b":"]"}]},-1.5e3,null]}`, true},
		{"spaces", " { \"kind\" : \"k\" , \"control\" : { \"reason\" : \"r\" } } ", true},
		{"empty", `{}`, true},
		{"empty control", `{"control":{}}`, true},
		{"no control", `{"kind":"success"}`, true},
		{"invalid", `{"kind":"k"`, false},
		{"not an object", `["kind"]`, false},
		{"null", `null`, false},
		{"empty bytes", ``, false},
		{"case-folded name", `{"Kind":"k"}`, false},
		{"case-folded control", `{"CONTROL":{"reason":"r"}}`, false},
		{"case-folded reason", `{"control":{"Reason":"r"}}`, false},
		{"escaped name", `{"k\u0069nd":"k"}`, false},
		{"non-ASCII name", `{"kınd":"k","ſ":1}`, false},
		{"twice", `{"kind":"a","kind":"b"}`, false},
		{"control twice", `{"control":{"reason":"a"},"control":{}}`, false},
		{"reason twice", `{"control":{"reason":"a","reason":"b"}}`, false},
		{"escaped string", `{"kind":"a\"b"}`, false},
		{"kind of the wrong type", `{"kind":1,"is_error":true}`, false},
		{"is_error of the wrong type", `{"is_error":"yes","kind":"k"}`, false},
		{"control null", `{"control":null}`, false},
		{"control of the wrong type", `{"control":"r"}`, false},
		{"is_error null", `{"is_error":null}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameReturn(t, []byte(tc.raw)); got != tc.fast {
				t.Errorf("fastReturn took it: %v, want %v", got, tc.fast)
			}
		})
	}
}

func TestSplitArray(t *testing.T) {
	cases := []struct {
		name, raw string
		fast      bool
	}{
		{"messages", `[{"role":"user","parts":[{"text":"a, b]"}]},{"role":"assistant"}]`, true},
		{"scalars", ` [ 1 , "a" , true , null , -2e-3 , [] , {} ] `, true},
		{"empty", `[]`, true},
		{"nested", `[[[]],[{"a":[1]}]]`, true},
		{"null", `null`, false},
		{"object", `{"a":1}`, false},
		{"invalid", `[1,]`, false},
		{"empty bytes", ``, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameSplit(t, []byte(tc.raw)); got != tc.fast {
				t.Errorf("splitArray took it: %v, want %v", got, tc.fast)
			}
		})
	}
}

// FuzzReturnScan is the differential test of fastReturn and splitArray
// against encoding/json.
func FuzzReturnScan(f *testing.F) {
	returns, messages := goldenPayloads(f)
	for _, b := range append(returns, messages...) {
		f.Add(b)
	}
	for _, s := range []string{`{"Kind":"k"}`, `{"kind":"a","kind":"b"}`, `{"control":{"reason":"a"},"control":{}}`, `[1,[2,{"3":"]"}]]`,
		`{"kind":"\u00e9","is_error":true,"control":{"reason":"r","x":[]}}`, strings.Repeat("[", 20) + strings.Repeat("]", 20)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameReturn(t, b)
		sameSplit(t, b)
	})
}
