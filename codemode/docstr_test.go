package codemode_test

import (
	"context"
	"strings"
	"testing"

	"github.com/weft-run/weft/codemode"
	"github.com/weft-run/weft/toolsets"
)

func TestDocstr(t *testing.T) {
	env := testEnv(t)
	doc := codemode.NewDocstrTool(env)
	reg := toolsets.NewRegistry()
	if err := reg.Register(doc); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, arg, want string
		isError         bool
	}{
		{"tool", "add", "func add(a int, b int)", false},
		{"object", "calendar", ".count(…)  method", false},
		{"value", "today", `today = \"2026-03-02\"`, false},
		{"hidden tool", "secret_adapter", "there is no tool or object named", true},
		{"typo", "calender", `did you mean \"calendar\"`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ret := reg.Call(context.Background(), toolsets.Invocation{Name: codemode.DocstrName, Arguments: []byte(`{"name":"` + c.arg + `"}`)})
			if !strings.Contains(string(ret.Content), c.want) || (ret.Kind != toolsets.KindSuccess) != c.isError {
				t.Fatalf("docstr(%s) = %s %s", c.arg, ret.Kind, ret.Content)
			}
		})
	}
	// Programs have it as a function.
	out, err := env.Run(t.Context(), `print(docstr(add))
docstr(calendar)`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Output, "func add(a int, b int)") || !strings.Contains(out.Value, "<calendar of ana>") {
		t.Fatalf("in a program: %+v", out)
	}
}
