package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

func TestCheckArguments(t *testing.T) {
	var runs atomic.Int32
	deploy := mustTool(t)(toolsets.NewFunc("deploy", func(_ context.Context, a struct {
		Env   string `json:"env"`
		Force bool   `json:"force,omitempty"`
	}) (string, error) {
		runs.Add(1)
		return a.Env, nil
	}))
	reg := toolsets.NewRegistry()
	if err := reg.Register(deploy); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tool  string
		args  string
		field string // the field an *InvalidArgumentsError names; "-" for none expected
		is    error
	}{
		{name: "fits", tool: "deploy", args: `{"env":"prod"}`},
		{name: "missing required", tool: "deploy", args: `{"force":true}`, field: "env"},
		{name: "mistyped", tool: "deploy", args: `{"env":7}`, field: "env"},
		{name: "unexpected", tool: "deploy", args: `{"env":"prod","region":"eu"}`, field: "region"},
		{name: "not JSON", tool: "deploy", args: `{"env":`, field: ""},
		{name: "empty is the empty object", tool: "deploy", args: ``, field: "env"},
		{name: "unknown tool", tool: "deplyo", args: `{}`, is: toolsets.ErrUnknownTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := reg.CheckArguments(tt.tool, json.RawMessage(tt.args))
			switch {
			case tt.is != nil:
				if !errors.Is(err, tt.is) {
					t.Errorf("err = %v, want %v", err, tt.is)
				}
			case tt.field == "" && tt.name == "fits":
				if err != nil {
					t.Errorf("err = %v, want nil", err)
				}
			default:
				var ia *toolsets.InvalidArgumentsError
				if !errors.As(err, &ia) || ia.Field != tt.field {
					t.Errorf("err = %#v, want an *InvalidArgumentsError on %q", err, tt.field)
				}
			}
		})
	}
	if runs.Load() != 0 {
		t.Errorf("the tool ran %d times", runs.Load())
	}
}
