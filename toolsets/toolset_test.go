package toolsets_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

func TestFunctionToolsetDefaults(t *testing.T) {
	fs, err := toolsets.NewFunction("functions",
		toolsets.WithID("functions-v1"),
		toolsets.WithInstructions("Return concise lookup results."),
		toolsets.WithMetadata(map[string]any{"source": "functions", "risk": "low"}),
		toolsets.WithSequential(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := toolsets.AddPlain(fs, "inherits", echo[noArgs]); err != nil {
		t.Fatal(err)
	}
	if err := toolsets.AddPlain(fs, "overrides", echo[noArgs], toolsets.WithSequential(false), toolsets.WithMetadata(map[string]any{"risk": "high"})); err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.AddToolset(t.Context(), fs); err != nil {
		t.Fatal(err)
	}
	defs := reg.Definitions()
	got := map[string]toolsets.Definition{}
	for _, d := range defs {
		got[d.Name] = d
	}
	if d := got["inherits"]; !d.Sequential || !cmp.Equal(d.Metadata, map[string]any{"source": "functions", "risk": "low"}) {
		t.Errorf("inherits: sequential %v metadata %v", d.Sequential, d.Metadata)
	}
	if d := got["overrides"]; d.Sequential || !cmp.Equal(d.Metadata, map[string]any{"source": "functions", "risk": "high"}) {
		t.Errorf("overrides: sequential %v metadata %v", d.Sequential, d.Metadata)
	}
	if fs.Info().ID != "functions-v1" {
		t.Errorf("id = %q", fs.Info().ID)
	}
}

func TestToolsetRejections(t *testing.T) {
	tests := []struct {
		name string
		run  func() error
		is   error
	}{
		{"duplicate in function toolset", func() error {
			fs, _ := toolsets.NewFunction("fs")
			if err := toolsets.AddPlain(fs, "a", echo[noArgs]); err != nil {
				return err
			}
			return toolsets.AddPlain(fs, "a", echo[noArgs])
		}, toolsets.ErrDuplicateTool},
		{"duplicate in static toolset", func() error {
			a, _ := toolsets.NewFunc("a", echo[noArgs])
			_, err := toolsets.New("ws", []toolsets.Tool{a, a})
			return err
		}, toolsets.ErrDuplicateTool},
		{"duplicate across toolsets", func() error {
			a, _ := toolsets.NewFunc("a", echo[noArgs])
			one, _ := toolsets.New("one", []toolsets.Tool{a})
			two, _ := toolsets.New("two", []toolsets.Tool{a})
			reg := toolsets.NewRegistry()
			if err := reg.AddToolset(context.Background(), one); err != nil {
				return err
			}
			return reg.AddToolset(context.Background(), two)
		}, toolsets.ErrDuplicateTool},
		{"strict toolset, tool without description", func() error {
			fs, _ := toolsets.NewFunction("fs", toolsets.WithStrict(true))
			return toolsets.AddPlain(fs, "a", echo[noArgs])
		}, toolsets.ErrMissingDescription},
		{"plain tool taking the context as arguments", func() error {
			fs, _ := toolsets.NewFunction("fs")
			return toolsets.AddPlain(fs, "a", func(context.Context, *toolsets.ToolContext) (int, error) { return 0, nil })
		}, toolsets.ErrInvalidDefinition},
		{"static toolset with tool defaults", func() error {
			_, err := toolsets.New("ws", nil, toolsets.WithStrict(true))
			return err
		}, toolsets.ErrInvalidDefinition},
		{"toolset bad name", func() error {
			_, err := toolsets.NewFunction("bad name")
			return err
		}, toolsets.ErrInvalidName},
		{"toolset with tool option", func() error {
			_, err := toolsets.NewFunction("fs", toolsets.WithSchema(`{}`))
			return err
		}, toolsets.ErrInvalidDefinition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(); !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
	// A strict toolset accepts a described tool, and a tool may opt out.
	fs, _ := toolsets.NewFunction("fs", toolsets.WithStrict(true))
	if err := toolsets.AddPlain(fs, "a", echo[noArgs], toolsets.WithDescription("A.")); err != nil {
		t.Error(err)
	}
	if err := toolsets.AddPlain(fs, "b", echo[noArgs], toolsets.WithStrict(false)); err != nil {
		t.Error(err)
	}
}

func TestInstructionsDeduplicated(t *testing.T) {
	a, _ := toolsets.NewFunc("a", echo[noArgs])
	ws, err := toolsets.New("workspace", []toolsets.Tool{a}, toolsets.WithInstructions("Prefer exact local facts.", "Prefer exact local facts."))
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := toolsets.NewFunction("functions", toolsets.WithInstructions("Be concise."))
	if err := toolsets.AddPlain(fs, "b", echo[noArgs]); err != nil {
		t.Fatal(err)
	}
	got := toolsets.RenderInstructions([]toolsets.Instruction{
		{Group: "workspace", Text: "Prefer exact local facts."},
		{Group: "functions", Text: "Be concise."},
		{Group: "workspace", Text: "Prefer exact local facts."},
		{Group: "workspace", Text: "Cite files."},
		{Text: "General rule."},
	})
	want := "- General rule.\n\n## workspace\n- Prefer exact local facts.\n- Cite files.\n\n## functions\n- Be concise.\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("render (-want +got):\n%s", diff)
	}
	reg := toolsets.NewRegistry()
	for _, ts := range []toolsets.Toolset{ws, fs} {
		if err := reg.AddToolset(t.Context(), ts); err != nil {
			t.Fatal(err)
		}
	}
	want = "## workspace\n- Prefer exact local facts.\n\n## functions\n- Be concise.\n"
	if diff := cmp.Diff(want, reg.Instructions()); diff != "" {
		t.Errorf("registry instructions (-want +got):\n%s", diff)
	}
}

// A function toolset's WithConcurrentSafe is the default of its tools; a
// tool's own option wins.
func TestFunctionToolsetConcurrentSafeDefault(t *testing.T) {
	tests := []struct {
		name    string
		toolset []toolsets.Option
		tool    []toolsets.Option
		want    bool
	}{
		{name: "no option", want: false},
		{name: "toolset default", toolset: []toolsets.Option{toolsets.WithConcurrentSafe(true)}, want: true},
		{name: "tool overrides the default", toolset: []toolsets.Option{toolsets.WithConcurrentSafe(true)}, tool: []toolsets.Option{toolsets.WithConcurrentSafe(false)}, want: false},
		{name: "tool only", tool: []toolsets.Option{toolsets.WithConcurrentSafe(true)}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := toolsets.NewFunction("reads", tt.toolset...)
			if err != nil {
				t.Fatal(err)
			}
			if err := toolsets.AddPlain(fs, "read", echo[noArgs], tt.tool...); err != nil {
				t.Fatal(err)
			}
			reg := toolsets.NewRegistry()
			if err := reg.AddToolset(t.Context(), fs); err != nil {
				t.Fatal(err)
			}
			d, _ := reg.Lookup("read")
			if d.ConcurrentSafe != tt.want {
				t.Errorf("ConcurrentSafe = %v, want %v", d.ConcurrentSafe, tt.want)
			}
		})
	}
	if _, err := toolsets.New("static", nil, toolsets.WithConcurrentSafe(true)); !errors.Is(err, toolsets.ErrInvalidDefinition) {
		t.Errorf("New with WithConcurrentSafe: %v, want ErrInvalidDefinition", err)
	}
}
