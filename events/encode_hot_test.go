package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// trickyStrings are strings whose encoding/json encoding escapes
// something: HTML characters (left as they are), bytes that are not
// UTF-8, U+2028 and U+2029, control characters, quotes and backslashes.
var trickyStrings = []string{
	"",
	"plain",
	"héllo <b>&amp;</b> 日本語 🎉",
	"\xff\xfe bad \xc3",
	"cut \xe2\x80",
	"surrogate \xed\xa0\x80",
	"a\u2028b\u2029c",
	"\x00\x01\x07\x1f\x7f\b\f\n\r\t\"\\/",
	"\ufffd already",
}

// trickyRaw are json.RawMessage values: compact, with white space, with
// bytes a string may hold as they are, nested beyond the fast scanner's
// depth, and not JSON at all.
var trickyRaw = []json.RawMessage{
	nil,
	{},
	json.RawMessage(`null`),
	json.RawMessage(`{"a":1,"b":[true,false,null],"c":"x"}`),
	json.RawMessage(" {\"a\" : 1 ,\n\t\"b\" : [ 1 , 2 ] }\r\n"),
	json.RawMessage(`{"a" :[1, 2],"b":{ },"c":[` + "\n" + `]}`),
	json.RawMessage(`"a string with <>& and \u2028 and ` + "\u2028 \xff" + `"`),
	json.RawMessage(`[{"role":"user","content":"hi \"there\" \\ \n"}]`),
	json.RawMessage(`-1.5e+10`),
	json.RawMessage(strings.Repeat("[", 300) + strings.Repeat("]", 300)),
	json.RawMessage(`{"a":}`),
	json.RawMessage(`{`),
	json.RawMessage(`[1,2]x`),
	json.RawMessage(`"ctl` + "\x01" + `"`),
	json.RawMessage(`01`),
	json.RawMessage(`   `),
}

// hotCases are values of every type with a hand-written encoder: empty,
// full, and with each tricky string and raw value in turn.
func hotCases() map[string]hotEncoder {
	usage := &Usage{Requests: 1, InputTokens: -2, OutputTokens: 1 << 40, CacheReadTokens: 4, CacheWriteTokens: 5, ToolCalls: 6,
		Details: map[string]int64{"zeta": 1, "alpha": -1, "Beta": 0, "<&>": 3, "\xff": 4, "a\u2028": 5, "": 6}}
	cases := map[string]hotEncoder{
		"run.started/empty":         RunStarted{},
		"run.completed/empty":       RunCompleted{},
		"model.request/empty":       ModelRequest{},
		"model.response/empty":      ModelResponse{},
		"tool.requested/empty":      ToolRequested{},
		"tool.started/empty":        ToolStarted{},
		"tool.returned/empty":       ToolReturned{},
		"usage.snapshot/empty":      UsageSnapshot{},
		"run.completed/usage0":      RunCompleted{Usage: &Usage{}},
		"model.response/usage0":     ModelResponse{Usage: &Usage{Details: map[string]int64{}}},
		"model.request/empty-tools": ModelRequest{Tools: []string{}, Messages: json.RawMessage{}},
		"tool.returned/error0":      ToolReturned{Error: &ErrorInfo{}},
		"run.started/full": RunStarted{Agent: "a", Input: json.RawMessage(`{"q":1}`), ParentRunID: "r", ParentSessionID: "s",
			ParentToolCallID: "c", Depth: -3, Metadata: json.RawMessage(`{"m":[1]}`)},
		"run.completed/full": RunCompleted{Output: json.RawMessage(`"done"`), Usage: usage},
		"model.request/full": ModelRequest{Model: "m", Messages: json.RawMessage(`[{"role":"user"}]`), Tools: []string{"a", "", "<b>"}},
		"model.response/full": ModelResponse{Model: "m", Message: json.RawMessage(`{"role":"assistant"}`), FinishReason: "stop",
			ToolCallIDs: []string{"c1", "c2"}, Usage: usage, Attempts: 2, OutputRejected: "no",
			RequestAmended: &Amendment{DigestBefore: "sha256:00", DigestAfter: ""}},
		"tool.requested/full": ToolRequested{Tool: "t", Toolset: "ts", Arguments: json.RawMessage(`{"x":1}`), RawArguments: "{x", Parent: "p"},
		"tool.started/full":   ToolStarted{Tool: "t", Attempt: 7, Node: "n"},
		"usage.snapshot/full": UsageSnapshot{Scope: "run", Usage: *usage},
		"tool.returned/full": ToolReturned{Tool: "t", Return: json.RawMessage(`{"ok":true}`), IsError: true, Attempt: 3,
			Error: &ErrorInfo{Kind: "k", Message: "m", Type: "*fs.PathError"}},
	}
	for i, s := range trickyStrings {
		n := "/str" + string(rune('a'+i))
		cases["run.started"+n] = RunStarted{Agent: s, ParentRunID: s, ParentSessionID: s, ParentToolCallID: s}
		cases["model.request"+n] = ModelRequest{Model: s, Tools: []string{s, s}}
		cases["model.response"+n] = ModelResponse{Model: s, FinishReason: s, ToolCallIDs: []string{s}, OutputRejected: s,
			Usage: &Usage{Details: map[string]int64{s: 1, s + "x": 2}}, RequestAmended: &Amendment{DigestBefore: s, DigestAfter: s}}
		cases["tool.requested"+n] = ToolRequested{Tool: s, Toolset: s, RawArguments: s, Parent: s}
		cases["tool.started"+n] = ToolStarted{Tool: s, Node: s}
		cases["usage.snapshot"+n] = UsageSnapshot{Scope: s, Usage: Usage{Details: map[string]int64{s: 1}}}
		cases["tool.returned"+n] = ToolReturned{Tool: s, Return: json.RawMessage(`1`), Error: &ErrorInfo{Kind: s, Message: s, Type: s}}
	}
	for i, r := range trickyRaw {
		n := "/raw" + string(rune('a'+i))
		cases["run.started"+n] = RunStarted{Input: r, Metadata: r}
		cases["run.completed"+n] = RunCompleted{Output: r}
		cases["model.request"+n] = ModelRequest{Messages: r}
		cases["model.response"+n] = ModelResponse{Message: r}
		cases["tool.requested"+n] = ToolRequested{Arguments: r}
		cases["tool.returned"+n] = ToolReturned{Return: r}
	}
	return cases
}

// checkSameEncoding fails t unless v's hand-written encoder writes what
// encoding/json writes (or both fail), and marshalSealable writes it too,
// with its value and with a pointer to it.
func checkSameEncoding(t *testing.T, v hotEncoder) {
	t.Helper()
	want, wantErr := marshalReflect(v)
	got, err := v.appendJSON([]byte("prefix"))
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%#v: hand-written error %v, encoding/json error %v", v, err, wantErr)
	}
	if err == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("%#v:\nhand-written %q\nencoding/json %q", v, got[len("prefix"):], want)
	}
	for _, x := range []any{v, pointerTo(v)} {
		room, roomErr := marshalSealable(x)
		if (roomErr == nil) != (wantErr == nil) || !bytes.Equal(room, want) {
			t.Fatalf("%#v: marshalSealable %q, %v; encoding/json %q, %v", x, room, roomErr, want, wantErr)
		}
		if roomErr != nil && roomErr.Error() != wantErr.Error() {
			t.Fatalf("%#v: marshalSealable error %q, encoding/json error %q", x, roomErr, wantErr)
		}
		if roomErr == nil && cap(room)-len(room) < sealLen {
			t.Fatalf("%#v: marshalSealable left %d bytes of room, want %d", x, cap(room)-len(room), sealLen)
		}
	}
}

// pointerTo returns a pointer to a copy of v.
func pointerTo(v hotEncoder) any {
	switch d := v.(type) {
	case RunStarted:
		return &d
	case RunCompleted:
		return &d
	case ModelRequest:
		return &d
	case ModelResponse:
		return &d
	case ToolRequested:
		return &d
	case ToolStarted:
		return &d
	case ToolReturned:
		return &d
	case UsageSnapshot:
		return &d
	}
	panic("no pointer case for a hot type")
}

func TestHotEncodersMatchEncodingJSON(t *testing.T) {
	for name, v := range hotCases() {
		t.Run(name, func(t *testing.T) { checkSameEncoding(t, v) })
	}
}

// TestHotEncodersCoverTheirTypes: the cases are named after the catalogue
// type whose data struct they hold, and reach every hot type.
func TestHotEncodersCoverTheirTypes(t *testing.T) {
	seen := map[Type]bool{}
	for name, v := range hotCases() {
		typ := Type(name[:strings.IndexByte(name, '/')])
		s, ok := catalogue[typ]
		if !ok || reflect.TypeOf(v) != s.goType {
			t.Fatalf("case %s holds a %T, not the data of %s", name, v, typ)
		}
		seen[typ] = true
	}
	if len(seen) != 8 {
		t.Fatalf("cases reach %d types, want 8: %v", len(seen), seen)
	}
}

// TestHotEncodersWriteEveryField fills every exported field of each hot
// type with a value that is not zero, so that a field which the
// hand-written encoder leaves out (an omitempty one above all, which the
// named-field cases leave zero) makes it differ from encoding/json.
func TestHotEncodersWriteEveryField(t *testing.T) {
	hot := reflect.TypeFor[hotEncoder]()
	n := 0
	for typ, s := range catalogue {
		if !s.goType.Implements(hot) {
			continue
		}
		n++
		v := reflect.New(s.goType).Elem()
		fillNonZero(t, v)
		t.Run(string(typ), func(t *testing.T) { checkSameEncoding(t, v.Interface().(hotEncoder)) })
	}
	if n != 8 {
		t.Fatalf("the catalogue has %d hot types, want 8", n)
	}
}

// fillNonZero sets v, and every exported field, element and pointee
// under it, to a value that is not zero: strings "x", numbers 1, bools
// true, json.RawMessage `1`, slices of one element, maps of one key.
func fillNonZero(t *testing.T, v reflect.Value) {
	t.Helper()
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		v.SetBytes([]byte("1"))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillNonZero(t, v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillNonZero(t, v.Index(0))
	case reflect.Map:
		k := reflect.New(v.Type().Key()).Elem()
		e := reflect.New(v.Type().Elem()).Elem()
		fillNonZero(t, k)
		fillNonZero(t, e)
		v.Set(reflect.MakeMapWithSize(v.Type(), 1))
		v.SetMapIndex(k, e)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillNonZero(t, v.Field(i))
			}
		}
	default:
		t.Fatalf("fillNonZero: no non-zero value for a %s", v.Type())
	}
}

// TestNewDataRefusesInvalidRawJSON: the hand-written encoders keep
// encoding/json's refusal of a json.RawMessage that is not JSON.
func TestNewDataRefusesInvalidRawJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  Type
		data any
	}{
		{"messages cut", TypeModelRequest, ModelRequest{Model: "m", Messages: json.RawMessage(`[{"role":"user"`)}},
		{"messages trailing", TypeModelRequest, &ModelRequest{Model: "m", Messages: json.RawMessage(`[] []`)}},
		{"arguments", TypeToolRequested, ToolRequested{Tool: "t", Arguments: json.RawMessage(`{bad}`)}},
		{"return empty", TypeToolReturned, ToolReturned{Tool: "t", Return: json.RawMessage{}}},
		{"message control character", TypeModelResponse, ModelResponse{Message: json.RawMessage("\"a\x01\"")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := NewData(tc.typ, tc.data)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("NewData = %q, %v; want ErrMalformed", raw, err)
			}
		})
	}
}

// FuzzHotEncoders builds values of every hot type from fuzzed strings,
// integers and raw bytes: the hand-written encoders must write what
// encoding/json writes, and fail where it fails.
func FuzzHotEncoders(f *testing.F) {
	for i, s := range trickyStrings {
		r := trickyRaw[i%len(trickyRaw)]
		f.Add(s, "k"+s, int64(i)-3, []byte(r), r == nil, i%2 == 0)
	}
	f.Add("", "", int64(0), []byte(nil), true, false)
	f.Add("m", "", int64(1<<62), []byte(`  [ {"role" : "user" } ]  `), false, true)
	f.Fuzz(func(t *testing.T, s, k string, n int64, rawBytes []byte, rawNil, flag bool) {
		raw := json.RawMessage(rawBytes)
		if rawNil {
			raw = nil
		} else if raw == nil {
			raw = json.RawMessage{}
		}
		var usage *Usage
		var errInfo *ErrorInfo
		var amended *Amendment
		if flag {
			usage = &Usage{Requests: n, InputTokens: -n, ToolCalls: n / 2, Details: map[string]int64{s: n, k: -n, s + k: 0}}
			errInfo = &ErrorInfo{Kind: k, Message: s, Type: s + k}
			amended = &Amendment{DigestBefore: s, DigestAfter: k}
		}
		for _, v := range []hotEncoder{
			RunStarted{Agent: s, Input: raw, ParentRunID: k, ParentSessionID: s, ParentToolCallID: k, Depth: int(n), Metadata: raw},
			RunCompleted{Output: raw, Usage: usage},
			ModelRequest{Model: s, Messages: raw, Tools: []string{s, k}[:n&1+1]},
			ModelResponse{Model: k, Message: raw, FinishReason: s, ToolCallIDs: []string{k}, Usage: usage, Attempts: int(n),
				OutputRejected: s, RequestAmended: amended},
			ToolRequested{Tool: s, Toolset: k, Arguments: raw, RawArguments: s, Parent: k},
			ToolStarted{Tool: s, Attempt: int(n), Node: k},
			ToolReturned{Tool: s, Return: raw, IsError: flag, Attempt: int(n), Error: errInfo},
			UsageSnapshot{Scope: s, Usage: Usage{OutputTokens: n, Details: map[string]int64{k: n}}},
		} {
			checkSameEncoding(t, v)
		}
	})
}

// BenchmarkRawCheck compares what the hand-written encoders do with a
// ~2 KB json.RawMessage (appendCompactJSON: one scan, one white space
// pass, one copy) with what encoding/json does (a validating compaction).
func BenchmarkRawCheck(b *testing.B) {
	var m bytes.Buffer
	m.WriteString(`[{"role":"system","content":"You are a careful assistant."}`)
	for i := range 12 {
		m.WriteString(`,{"role":"user","content":"what is the status of release v1.4.` + string(rune('0'+i%10)) + `, and did the smoke tests pass?","n":[1,2.5,-3e2,true,null]}`)
	}
	m.WriteString(`]`)
	raw := m.Bytes()
	dst := make([]byte, 0, 2*len(raw))
	b.Run("appendCompactJSON", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := appendCompactJSON(dst[:0], raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if !json.Valid(raw) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("json.Compact", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if err := json.Compact(bytes.NewBuffer(dst[:0]), raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
