package toolsets_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-run/weft/toolsets"
)

type deployArgs struct {
	Environment string `json:"environment"`
	Ticket      string `json:"ticket"`
	Options     *struct {
		Region string `json:"region"`
	} `json:"options,omitempty"`
	Steps []struct {
		Name string `json:"name"`
	} `json:"steps,omitempty"`
}

type sizedArgs struct {
	Count int64   `json:"count"`
	Small uint8   `json:"small,omitempty"`
	N     int     `json:"n,omitempty"`
	Ratio float32 `json:"ratio,omitempty"`
}

// TestAmbiguousArgumentsAreRefused: arguments that name a member twice (at
// any depth, however the name is spelt) or hold numbers no field can take
// are invalid_arguments naming the field, and the tool never runs.
func TestAmbiguousArgumentsAreRefused(t *testing.T) {
	var runs atomic.Int32
	deploy, err := toolsets.NewFunc("deploy", func(_ context.Context, a deployArgs) (deployArgs, error) { runs.Add(1); return a, nil })
	if err != nil {
		t.Fatal(err)
	}
	sized, err := toolsets.NewFunc("sized", func(_ context.Context, a sizedArgs) (sizedArgs, error) { runs.Add(1); return a, nil })
	if err != nil {
		t.Fatal(err)
	}
	// A schema laxer than the Go type: the typed decode has the last word.
	lax, err := toolsets.NewFunc("lax", func(_ context.Context, a sizedArgs) (sizedArgs, error) { runs.Add(1); return a, nil },
		toolsets.WithSchema(`{"type":"object","properties":{"count":{"type":"number"},"n":{"type":"number"}},"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	anyArgs, err := toolsets.NewFunc("any", func(_ context.Context, a map[string]any) (map[string]any, error) { runs.Add(1); return a, nil },
		toolsets.WithSchema(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(deploy, sized, lax, anyArgs); err != nil {
		t.Fatal(err)
	}
	many := `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k3":"again"}`
	tests := []struct {
		name, tool, args string
		field            string
		message          []string
	}{
		{"duplicate top-level key", "deploy", `{"environment":"staging","ticket":"T-7","environment":"production"}`, "environment", []string{`argument "environment" appears more than once`}},
		{"duplicate nested key", "deploy", `{"environment":"staging","ticket":"T-7","options":{"region":"eu","region":"us"}}`, "options.region", []string{`"options.region" appears more than once`}},
		{"duplicate key in an array item", "deploy", `{"environment":"s","ticket":"T","steps":[{"name":"a"},{"name":"b","name":"c"}]}`, "steps[1].name", []string{`"steps[1].name"`}},
		{"duplicate spelt with an escape", "deploy", `{"environment":"staging","ticket":"T","\u0065nvironment":"production"}`, "environment", []string{"more than once"}},
		{"duplicate invalid UTF-8 names", "any", "{\"\xff\":1,\"\xfe\":2}", "\ufffd", []string{"more than once"}},
		{"duplicate in a large object", "any", many, "k3", []string{`"k3" appears more than once`}},
		{"duplicate in an untyped tool", "any", `{"a":[{"b":{"c":1,"c":1}}]}`, "a[0].b.c", []string{"more than once"}},
		{"number beyond float64", "any", `{"a":{"b":[1,1e400]}}`, "a.b[1]", []string{`argument "a.b[1]" is the number 1e400, which is out of range`}},
		{"top-level number beyond float64", "any", `1e400`, "", []string{`the arguments are the number 1e400, which is out of range`}},
		{"30 digits for an int64", "sized", `{"count":123456789012345678901234567890}`, "count", []string{`argument "count" must be an integer from -9223372036854775808 to 9223372036854775807, got 123456789012345678901234567890`}},
		{"2^63 for an int64", "sized", `{"count":9223372036854775808}`, "count", []string{"from -9223372036854775808 to 9223372036854775807, got 9223372036854775808"}},
		{"300 for a uint8", "sized", `{"count":1,"small":300}`, "small", []string{`argument "small" must be at most 255, got 300`}},
		{"1.5 for an int", "lax", `{"n":1.5}`, "n", []string{`argument "n" must be an integer from -9223372036854775808 to 9223372036854775807, got 1.5`}},
		{"1e39 for a float32", "sized", `{"count":1,"ratio":1e39}`, "ratio", []string{`argument "ratio" must be a number from -3.4028234663852886e+38 to 3.4028234663852886e+38, got 1e39`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runs.Load()
			ret := reg.Call(t.Context(), toolsets.Invocation{CallID: "c1", Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if ret.Kind != toolsets.KindInvalidArguments {
				t.Fatalf("kind = %s, want invalid_arguments (%s)", ret.Kind, ret.Content)
			}
			if runs.Load() != before {
				t.Error("the tool ran")
			}
			if ret.Control.Field != tt.field {
				t.Errorf("field = %q, want %q", ret.Control.Field, tt.field)
			}
			for _, m := range tt.message {
				if !strings.Contains(ret.Control.Message, m) {
					t.Errorf("message %q does not contain %q", ret.Control.Message, m)
				}
			}
			if strings.Contains(ret.Control.Message, "not valid JSON") {
				t.Errorf("message %q calls valid JSON invalid", ret.Control.Message)
			}
			if ret.Control.HowToFix == "" {
				t.Error("no fix")
			}
			if err := reg.CheckArguments(tt.tool, json.RawMessage(tt.args)); err == nil && !strings.Contains(tt.name, "for a") && !strings.Contains(tt.name, "for an") {
				t.Error("CheckArguments accepts them")
			}
		})
	}
}

// TestUnambiguousArgumentsPass: the same name in different objects, names
// that differ only in case for a map, and large integers that fit are
// accepted and reach the tool exactly.
func TestUnambiguousArgumentsPass(t *testing.T) {
	sized, err := toolsets.NewFunc("sized", func(_ context.Context, a sizedArgs) (sizedArgs, error) { return a, nil })
	if err != nil {
		t.Fatal(err)
	}
	anyArgs, err := toolsets.NewFunc("any", func(_ context.Context, a map[string]any) (map[string]any, error) { return a, nil },
		toolsets.WithSchema(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(sized, anyArgs); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}`, `{"env":1,"Env":2}`, `{"x":1e308,"y":-1e-400}`} {
		if ret := reg.Call(t.Context(), toolsets.Invocation{Name: "any", Arguments: json.RawMessage(args)}); ret.Kind != toolsets.KindSuccess {
			t.Errorf("%s: kind = %s: %s", args, ret.Kind, ret.Content)
		}
	}
	// 2.0 makes the decode normalise; the large integer keeps every digit.
	ret := reg.Call(t.Context(), toolsets.Invocation{Name: "sized", Arguments: json.RawMessage(`{"count":9007199254740993,"n":2.0,"small":255}`)})
	if ret.Kind != toolsets.KindSuccess {
		t.Fatalf("kind = %s: %s", ret.Kind, ret.Content)
	}
	if diff := cmp.Diff(sizedArgs{Count: 9007199254740993, N: 2, Small: 255}, ret.Value); diff != "" {
		t.Errorf("the tool received (-want +got):\n%s", diff)
	}
}

func TestCanonicalArguments(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", ``, `{}`},
		{"sorted, compact", "{ \"b\" : 1,\n \"a\" : [true, null] }", `{"a":[true,null],"b":1}`},
		{"escapes resolved", `{"env":"\u0070roduction","html":"<b>&amp;</b>","nl":"a\nb"}`, `{"env":"production","html":"<b>&amp;</b>","nl":"a\nb"}`},
		{"integral numbers as integers", `{"a":2.0,"b":1e2,"c":-3.000,"d":2.5e1,"e":0.0}`, `{"a":2,"b":100,"c":-3,"d":25,"e":0}`},
		{"other numbers keep their text", `{"a":1.5,"b":12345678901234567890,"c":1E-7,"d":1e-999999999}`, `{"a":1.5,"b":12345678901234567890,"c":1E-7,"d":1e-999999999}`},
		{"nested", `{"z":{"y":[{"b":1,"a":2}]},"a":"x"}`, `{"a":"x","z":{"y":[{"a":2,"b":1}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toolsets.CanonicalArguments(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			again, err := toolsets.CanonicalArguments(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("not idempotent: %s, %v", again, err)
			}
		})
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":`, `{"n":1e400}`} {
		_, err := toolsets.CanonicalArguments(json.RawMessage(bad))
		var ia *toolsets.InvalidArgumentsError
		if !errors.As(err, &ia) {
			t.Errorf("CanonicalArguments(%s) = %v, want an *InvalidArgumentsError", bad, err)
		}
	}
}

// FuzzCanonicalArguments: the canonical form of any accepted arguments is
// the same JSON value, is its own canonical form, and exists exactly when
// the registry accepts the arguments' text (the registry also wants an
// object).
func FuzzCanonicalArguments(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `{"b":1,"a":[2.0,1e2,-0.0,1.5e-3]}`, `{"s":"\u0070<&>\n\u2028"}`, `{"a":1,"a":2}`,
		`{"n":12345678901234567890.0}`, `{"n":1e-999999999}`, `{"n":1e400}`, `[{"x":{"y":null}}]`, `"x"`, `{"k":`,
	} {
		f.Add([]byte(seed))
	}
	reg := toolsets.NewRegistry()
	anyTool, err := toolsets.NewFunc("any", func(_ context.Context, a map[string]any) (map[string]any, error) { return a, nil },
		toolsets.WithSchema(`{"type":"object"}`))
	if err != nil {
		f.Fatal(err)
	}
	if err := reg.Register(anyTool); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := toolsets.CanonicalArguments(raw)
		// What the registry accepts has a canonical form; what has none the
		// registry refuses (it also refuses any value but an object).
		if checkErr := reg.CheckArguments("any", raw); err != nil && checkErr == nil || checkErr != nil && err == nil && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
			t.Fatalf("%q: canonical error %v, registry check %v", raw, err, checkErr)
		}
		if err != nil {
			return
		}
		again, err := toolsets.CanonicalArguments(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("%q: canonical %s is not its own canonical form (%s, %v)", raw, c, again, err)
		}
		if len(strings.TrimSpace(string(raw))) == 0 {
			return
		}
		var want, got any
		if json.Unmarshal(raw, &want) != nil || json.Unmarshal(c, &got) != nil {
			t.Fatalf("%q: canonical %s does not decode", raw, c)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q: canonical %s is another value (-raw +canonical):\n%s", raw, c, diff)
		}
	})
}
