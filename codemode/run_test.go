package codemode_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft/codemode"
	"github.com/weft-run/weft/toolsets"
)

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

func testEnv(t testing.TB) *codemode.Env {
	t.Helper()
	add, err := toolsets.NewFunc("add", func(_ context.Context, a addArgs) (int, error) { return a.A + a.B, nil })
	if err != nil {
		t.Fatal(err)
	}
	secret, err := toolsets.NewFunc("secret_adapter", func(context.Context, struct{}) (string, error) { return "x", nil }, toolsets.WithVisibility(toolsets.Hidden))
	if err != nil {
		t.Fatal(err)
	}
	return &codemode.Env{
		Tools:   []toolsets.Tool{add, secret},
		Objects: map[string]any{"calendar": &testCalendar{}},
		Values:  map[string]any{"today": "2026-03-02"},
	}
}

type testCalendar struct{}

func (c *testCalendar) Attr(name string) (any, bool) {
	if name == "owner" {
		return "ana", true
	}
	if name == "count" {
		return codemode.Method(func(args []any, _ map[string]any) (any, error) { return len(args), nil }), true
	}
	return nil, false
}
func (c *testCalendar) AttrNames() []string { return []string{"count", "owner"} }
func (c *testCalendar) Repr() string        { return "<calendar of ana>" }

func ret(name string, content string) toolsets.Return {
	return toolsets.Return{ToolName: name, Kind: toolsets.KindSuccess, Success: true, Content: json.RawMessage(content)}
}

func TestRunReplaysTheJournal(t *testing.T) {
	env := testEnv(t)
	src := "x = add(1, b=2)\ny = add(x, 10)\nprint('y is', y)\ny * 2"
	out, err := env.Run(t.Context(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Call == nil || out.Call.Name != "add" || string(out.Call.Arguments) != `{"a":1,"b":2}` {
		t.Fatalf("first run: got call %+v, want add{a:1,b:2}", out.Call)
	}
	out, err = env.Run(t.Context(), src, &toolsets.CodeInput{Journal: []toolsets.Return{ret("add", "3")}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Call == nil || string(out.Call.Arguments) != `{"a":3,"b":10}` {
		t.Fatalf("second run: got call %+v, want add{a:3,b:10}", out.Call)
	}
	out, err = env.Run(t.Context(), src, &toolsets.CodeInput{Journal: []toolsets.Return{ret("add", "3"), ret("add", "13")}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Call != nil || out.Output != "y is 13\n" || out.Value != "26" || out.Calls != 2 {
		t.Fatalf("final run: %+v", out)
	}
	if got := string(out.State.Values["y"]); got != "13" {
		t.Fatalf("variable y = %s, want 13", got)
	}
}

func TestRunDivergence(t *testing.T) {
	env := testEnv(t)
	_, err := env.Run(t.Context(), "add(1, 2)", &toolsets.CodeInput{Journal: []toolsets.Return{ret("move_meeting", "null")}})
	var de *codemode.DivergenceError
	if !errors.As(err, &de) || de.Index != 1 || de.Recorded != "move_meeting" || de.Got != "add" {
		t.Fatalf("err = %v, want a DivergenceError at call 1", err)
	}
}

func TestRunToolErrorStopsTheProgram(t *testing.T) {
	env := testEnv(t)
	failed := toolsets.Return{ToolName: "add", Kind: toolsets.KindExecution, IsError: true, Content: json.RawMessage(`"no slot available"`),
		PrivateMetadata: map[string]any{"error_type": "*errors.errorString"}}
	_, err := env.Run(t.Context(), "add(1, 2)\nprint('after')", &toolsets.CodeInput{Journal: []toolsets.Return{failed}})
	var pe *codemode.ProgramError
	if !errors.As(err, &pe) || pe.Tool != "add" || !strings.Contains(pe.Message, "no slot available") {
		t.Fatalf("err = %v, want a ProgramError naming add and its message", err)
	}
}

func TestRunVariablesAndObjects(t *testing.T) {
	env := testEnv(t)
	out, err := env.Run(t.Context(), "cal = calendar\nn = cal.count(1, 2)\nowner = cal.owner\nf = lambda: 1", nil)
	if err != nil {
		t.Fatal(err)
	}
	st := out.State
	if st.Objects["cal"] != "calendar" || string(st.Values["n"]) != "2" || string(st.Values["owner"]) != `"ana"` {
		t.Fatalf("state = %+v", st)
	}
	if !strings.Contains(st.Unkept["f"], "function") {
		t.Fatalf("unkept f = %q, want a reason naming a function", st.Unkept["f"])
	}
	if !strings.Contains(codemode.Summary(out), "note: variable f is not kept") {
		t.Fatalf("summary does not name the unkept variable: %q", codemode.Summary(out))
	}
	// The next program starts with them, the object bound by name.
	in := &toolsets.CodeInput{Variables: st.Values, Objects: st.Objects}
	out, err = env.Run(t.Context(), "print(cal.owner, n)\ncal", in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Output != "ana 2\n" || out.Value != "<calendar of ana>" {
		t.Fatalf("second program: output %q value %q", out.Output, out.Value)
	}
	if out.State.Objects["cal"] != "calendar" {
		t.Fatalf("the handle was not kept: %+v", out.State)
	}
}

func TestRunRefusals(t *testing.T) {
	env := testEnv(t)
	cases := []struct {
		name string
		src  string
		want string // in the error
		is   func(error) bool
	}{
		{"load", `load("os.star", "system")`, "load", nil},
		{"open", `open("/etc/passwd")`, `named "open"`, nil},
		{"unknown builtin", `exec("x")`, "exec", nil},
		{"clock", `time.now()`, `named "time"`, nil},
		{"environment", `os.environ["HOME"]`, `named "os"`, nil},
		{"recursion", "def f(n):\n  return f(n)\nf(1)", "recursi", nil},
		{"step limit", "x = 0\nwhile True:\n  x += 1", "steps", func(err error) bool { var le *codemode.LimitError; return errors.As(err, &le) && le.Limit == "steps" }},
		{"huge string", `s = "x" * (1 << 31)`, "repeat", nil},
		{"memory", "l = []\nfor i in range(100):\n  l.append(\"x\" * 50000000)", "memory", nil},
		{"source cap", "x = 1\n" + strings.Repeat("#", codemode.MaxSource), "limit is", func(err error) bool { return errors.Is(err, codemode.ErrRefused) }},
		{"hidden tool", `secret_adapter()`, "not available to programs", func(err error) bool { return errors.Is(err, codemode.ErrRefused) }},
		{"unknown tool", `ad(1, 2)`, `did you mean "add"`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := env.Run(t.Context(), c.src, nil)
			if err == nil {
				t.Fatalf("ran: %+v; want a refusal", out)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v; want it to mention %q", err, c.want)
			}
			if c.is != nil && !c.is(err) {
				t.Fatalf("err = %#v is not of the expected type", err)
			}
		})
	}
}

func TestRunHiddenToolRefusedBeforeAnythingRuns(t *testing.T) {
	env := testEnv(t)
	_, err := env.Run(t.Context(), "add(1, 2)\nsecret_adapter()", nil)
	if !errors.Is(err, codemode.ErrRefused) {
		t.Fatalf("err = %v; want the program refused before its first call", err)
	}
}

func TestRunCancellationStopsTheThread(t *testing.T) {
	env := testEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := env.Run(ctx, "x = 0\nfor i in range(100000000):\n  x += i", nil)
	var le *codemode.LimitError
	if !errors.As(err, &le) || le.Limit != "cancelled" && le.Limit != "steps" {
		t.Fatalf("err = %v; want the program stopped", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v to stop", d)
	}
}

func TestRunOutputCap(t *testing.T) {
	env := testEnv(t)
	out, err := env.Run(t.Context(), "for i in range(5000):\n  print('line', i)", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Output) > codemode.MaxOutput+100 || !strings.Contains(out.Output, "output cut") {
		t.Fatalf("output of %d bytes, want at most %d and a note", len(out.Output), codemode.MaxOutput)
	}
}
