package codemode_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/weft-run/weft/codemode"
	"github.com/weft-run/weft/toolsets"
)

type meeting struct {
	Title  string    `json:"title"`
	Starts time.Time `json:"starts_at"`
	secret string
	Tags   []string `json:"tags,omitempty"`
}

type repr struct{}

func (repr) Repr() string { return "<room blue>" }

func TestRender(t *testing.T) {
	long := make([]int, 25)
	for i := range long {
		long[i] = i
	}
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"none", nil, "None"},
		{"bool", true, "True"},
		{"int", 42, "42"},
		{"float", 2.5, "2.5"},
		{"string", "a \"b\"", `"a \"b\""`},
		{"time", time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC), "2026-03-02T10:00:00Z"},
		{"date", toolsets.Date{Year: 2026, Month: 3, Day: 2}, "2026-03-02"},
		{"list", []any{1, "x", nil}, `[1, "x", None]`},
		{"map sorted", map[string]int{"b": 2, "a": 1}, `{"a": 1, "b": 2}`},
		{"struct by field", meeting{Title: "Planning", Starts: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC), secret: "x"}, `meeting(title="Planning", starts_at=2026-03-02T10:00:00Z, tags=[])`},
		{"pointer", &meeting{Title: "P"}, `meeting(title="P", starts_at=0001-01-01T00:00:00Z, tags=[])`},
		{"long list cut", long, "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, … (5 more)]"},
		{"object repr", repr{}, "<room blue>"},
		{"json", json.RawMessage(`{"z":[1,2],"a":"x"}`), `{"a": "x", "z": [1, 2]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := codemode.Render(c.v); got != c.want {
				t.Fatalf("Render = %s\nwant     %s", got, c.want)
			}
			if again := codemode.Render(c.v); again != codemode.Render(c.v) {
				t.Fatal("not deterministic")
			}
		})
	}
	s := codemode.Render(strings.Repeat("x", codemode.RenderChars+10))
	if !strings.HasSuffix(s, "…(10 more chars)") {
		t.Fatalf("long string: %s", s[len(s)-30:])
	}
}
