package toolsets_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft/toolsets"
)

type severity string

func (severity) Enum() []string { return []string{"info", "warning", "error"} }

type user struct {
	name string
}

type convArgs struct {
	Level     severity                                           `json:"level,omitempty"`
	Channel   string                                             `json:"channel,omitempty" enum:"email,sms"`
	At        time.Time                                          `json:"at,omitzero"`
	Day       toolsets.Date                                      `json:"day,omitzero"`
	Clock     toolsets.TimeOfDay                                 `json:"clock,omitzero"`
	When      toolsets.Either[toolsets.Date, toolsets.TimeOfDay] `json:"when,omitzero"`
	Recipient *user                                              `json:"recipient,omitempty"`
	Message   string                                             `json:"message,omitempty"`
	Count     int                                                `json:"count,omitempty"`
}

// liveSource is a tool that holds live variables, as code mode's run_code
// does.
type liveSource struct{ toolsets.Tool }

func (liveSource) LiveVariable(name string) (any, bool) {
	if name == "user" {
		return &user{name: "ana"}, true
	}
	return nil, false
}

func convRegistry(t *testing.T, got *convArgs) *toolsets.Registry {
	t.Helper()
	send, err := toolsets.NewFunc("send_to", func(_ context.Context, a convArgs) (string, error) { *got = a; return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	noop, err := toolsets.NewFunc("noop", func(context.Context, struct{}) (string, error) { return "", nil })
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(send, liveSource{noop}); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestConvertSchema(t *testing.T) {
	var got convArgs
	def, _ := convRegistry(t, &got).Lookup("send_to")
	for _, want := range []string{`"level":{"type":"string","enum":["info","warning","error"]}`, `"enum":["email","sms"]`,
		`"at":{"type":"string","format":"date-time"}`, `"day":{"type":"string","format":"date"}`, `"clock":{"type":"string","format":"time"}`,
		`"when":{"anyOf":[{"type":"string","format":"date"},{"type":"string","format":"time"}]}`} {
		if !strings.Contains(string(def.Parameters), want) {
			t.Errorf("schema lacks %s:\n%s", want, def.Parameters)
		}
	}
}

func TestConvertArguments(t *testing.T) {
	cases := []struct {
		name  string
		args  string
		check func(convArgs) bool
		fails bool
	}{
		{"enum by name", `{"level":"ERROR"}`, func(a convArgs) bool { return a.Level == "error" }, false},
		{"enum tag", `{"channel":"SMS"}`, func(a convArgs) bool { return a.Channel == "sms" }, false},
		{"enum unknown", `{"level":"fatal"}`, nil, true},
		{"date-time zone-less", `{"at":"2026-03-02T10:30"}`, func(a convArgs) bool { return a.At.Equal(time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)) }, false},
		{"date-time date-only", `{"at":"2026-03-02"}`, func(a convArgs) bool { return a.At.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) }, false},
		{"date-time with zone", `{"at":"2026-03-02T10:30:00+02:00"}`, func(a convArgs) bool { return a.At.Equal(time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC)) }, false},
		{"date from date-time", `{"day":"2026-03-02T23:00:00Z"}`, func(a convArgs) bool { return a.Day == toolsets.Date{Year: 2026, Month: 3, Day: 2} }, false},
		{"time of day", `{"clock":"9:05"}`, func(a convArgs) bool { return a.Clock == toolsets.TimeOfDay{Hour: 9, Minute: 5} }, false},
		{"time of day with seconds and zone", `{"clock":"09:05:07Z"}`, func(a convArgs) bool { return a.Clock == toolsets.TimeOfDay{Hour: 9, Minute: 5, Second: 7} }, false},
		{"union first match date", `{"when":"2026-03-02"}`, func(a convArgs) bool { return a.When.A != nil && a.When.B == nil }, false},
		{"union second member", `{"when":"10:00"}`, func(a convArgs) bool { return a.When.B != nil && *a.When.B == toolsets.TimeOfDay{Hour: 10} }, false},
		{"live variable binds", `{"recipient":"user","message":"user"}`, func(a convArgs) bool { return a.Recipient != nil && a.Recipient.name == "ana" && a.Message == "user" }, false},
		{"unknown variable", `{"recipient":"nobody"}`, nil, true},
		{"string keeps the literal", `{"message":"2026-03-02"}`, func(a convArgs) bool { return a.Message == "2026-03-02" }, false},
		{"bad date", `{"at":"next tuesday"}`, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got convArgs
			reg := convRegistry(t, &got)
			ret := reg.Call(t.Context(), toolsets.Invocation{Name: "send_to", Arguments: json.RawMessage(c.args)})
			if c.fails {
				if ret.Kind != toolsets.KindInvalidArguments {
					t.Fatalf("ret = %s %s; want invalid_arguments", ret.Kind, ret.Content)
				}
				return
			}
			if ret.Kind != toolsets.KindSuccess || !c.check(got) {
				t.Fatalf("ret = %s %s; args %+v", ret.Kind, ret.Content, got)
			}
		})
	}
}

func TestConvertDurableVariable(t *testing.T) {
	type slot struct {
		Start string `json:"start"`
	}
	var got slot
	use, err := toolsets.NewFunc("use_slot", func(_ context.Context, a struct {
		Slot slot `json:"slot"`
	}) (string, error) {
		got = a.Slot
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(use); err != nil {
		t.Fatal(err)
	}
	ret := reg.Call(t.Context(), toolsets.Invocation{Name: "use_slot", Arguments: json.RawMessage(`{"slot":"later_slot"}`),
		Code: &toolsets.CodeInput{Variables: map[string]json.RawMessage{"later_slot": json.RawMessage(`{"start":"12:00"}`)}}})
	if ret.Kind != toolsets.KindSuccess || got.Start != "12:00" {
		t.Fatalf("ret = %s %s, got %+v", ret.Kind, ret.Content, got)
	}
}

func FuzzConvertArguments(f *testing.F) {
	var got convArgs
	reg := convRegistry(&testing.T{}, &got)
	def, _ := reg.Lookup("send_to")
	for _, s := range []string{`{"level":"ERROR"}`, `{"at":"2026-03-02"}`, `{"when":"10:00"}`, `{"recipient":"user"}`, `{"message":"x","count":3}`, `[]`, `{"at":{"x":[1,"2026-01-01"]}}`} {
		f.Add(s)
	}
	vars := toolsets.Variables{Durable: map[string]json.RawMessage{"v": json.RawMessage(`{"a":1}`)}, Live: func(n string) (any, bool) { return &user{}, n == "user" }}
	f.Fuzz(func(t *testing.T, args string) {
		out, live := toolsets.ConvertArguments(def.Parameters, json.RawMessage(args), vars)
		if string(out) != args && !json.Valid(out) {
			t.Fatalf("converted %q into invalid JSON %q", args, out)
		}
		for k := range live {
			if k != "recipient" {
				t.Fatalf("bound %q, which is not an object parameter", k)
			}
		}
		// Conversion is idempotent: converting again changes nothing.
		again, _ := toolsets.ConvertArguments(def.Parameters, out, toolsets.Variables{})
		if string(out) != args && string(again) != string(out) && len(live) == 0 {
			var a, b any
			if json.Unmarshal(again, &a) == nil && json.Unmarshal(out, &b) == nil && !jsonEqual(a, b) {
				t.Fatalf("not idempotent: %s → %s → %s", args, out, again)
			}
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
