package toolsets_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

func TestFactory(t *testing.T) {
	a := staticSet(t, "a", "x")
	b := staticSet(t, "b", "y")
	tests := []struct {
		name    string
		ret     any
		tools   []string
		perStep bool
		calls   int // factory calls over two steps of run r1 and one of r2
		is      error
	}{
		{"one toolset per step", a, []string{"x"}, true, 3, nil},
		{"several toolsets", []toolsets.Toolset{a, b}, []string{"x", "y"}, true, 3, nil},
		{"a preparation of toolsets", toolsets.Preparation{Toolsets: []toolsets.Toolset{b}}, []string{"y"}, true, 3, nil},
		{"a preparation pointer", &toolsets.Preparation{Tools: []toolsets.Tool{namedTool(t, "z")}}, []string{"z"}, true, 3, nil},
		{"nothing", nil, nil, true, 3, nil},
		{"cached for the run", a, []string{"x"}, false, 2, nil},
		{"unsupported value", 42, nil, true, 1, toolsets.ErrFactoryResult},
		{"nil in a list", []toolsets.Toolset{nil}, nil, true, 1, toolsets.ErrFactoryResult},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls int
			f, err := toolsets.NewFactory("workspace", func(_ context.Context, tc *toolsets.ToolsetContext) (any, error) {
				calls++
				return tt.ret, nil
			}, toolsets.PerRunStep(tt.perStep))
			if err != nil {
				t.Fatal(err)
			}
			for i, tc := range []*toolsets.ToolsetContext{{RunID: "r1"}, {RunID: "r1", RunStep: 1}, {RunID: "r2"}} {
				p, err := toolsets.Resolve(t.Context(), f, tc)
				if !errors.Is(err, tt.is) {
					t.Fatalf("step %d: err = %v, want %v", i, err, tt.is)
				}
				if err != nil {
					break
				}
				if diff := cmp.Diff(tt.tools, toolNames(p)); diff != "" {
					t.Errorf("step %d tools (-want +got):\n%s", i, diff)
				}
			}
			if calls != tt.calls {
				t.Errorf("factory called %d times, want %d", calls, tt.calls)
			}
		})
	}
}

func TestFactoryExitDropsCache(t *testing.T) {
	var calls int
	var exited []string
	dyn, err := toolsets.NewDynamic("d", toolsets.DynamicFuncs{
		Tools: func(context.Context, *toolsets.ToolsetContext) ([]toolsets.Tool, error) { return nil, nil },
		Exit: func(_ context.Context, tc *toolsets.ToolsetContext) error {
			exited = append(exited, tc.RunID)
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := toolsets.NewFactory("profile_tools", func(context.Context, *toolsets.ToolsetContext) (any, error) {
		calls++
		return dyn, nil
	}, toolsets.PerRunStep(false))
	if err != nil {
		t.Fatal(err)
	}
	l := toolsets.NewLifecycle(f)
	tc := &toolsets.ToolsetContext{RunID: "r1"}
	for range 2 {
		if _, _, err := l.Prepare(t.Context(), tc); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Exit(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Prepare(t.Context(), tc); err != nil {
		t.Fatal(err)
	}
	if calls != 2 || !cmp.Equal(exited, []string{"r1"}) {
		t.Errorf("calls %d exited %v, want 2 and [r1]", calls, exited)
	}
}

func TestNewFactoryRejects(t *testing.T) {
	fn := func(context.Context, *toolsets.ToolsetContext) (any, error) { return nil, nil }
	tests := []struct {
		name string
		id   string
		fn   toolsets.FactoryFunc
		opts []toolsets.FactoryOption
		is   error
	}{
		{"missing id", "", fn, nil, toolsets.ErrInvalidDefinition},
		{"nil function", "x", nil, nil, toolsets.ErrInvalidDefinition},
		{"id that is no name", "ws/v1", fn, nil, toolsets.ErrInvalidName},
		{"invalid explicit name", "ws/v1", fn, []toolsets.FactoryOption{toolsets.FactoryName("a b")}, toolsets.ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := toolsets.NewFactory(tt.id, tt.fn, tt.opts...); !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
	f, err := toolsets.NewFactory("ws/v1", fn, toolsets.FactoryName("workspace"))
	if err != nil || f.Info() != (toolsets.ToolsetInfo{Name: "workspace", ID: "ws/v1"}) {
		t.Errorf("factory %+v, %v", f, err)
	}
}
