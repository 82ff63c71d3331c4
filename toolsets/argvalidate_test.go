package toolsets_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weft-run/weft/toolsets"
)

type cityArgs struct {
	City string `json:"city"`
}

// TestArgumentValidators: validators run in order after the schema; the
// first normalises, the second sees its output and rejects, with a message
// for the model; the tool never runs on a refusal.
func TestArgumentValidators(t *testing.T) {
	var got string
	tool := mustTool(t)(toolsets.NewFunc("weather", func(_ context.Context, a cityArgs) (string, error) {
		got = a.City
		return "sunny", nil
	}))
	var order []string
	trim := func(args json.RawMessage) (json.RawMessage, error) {
		order = append(order, "trim")
		var a cityArgs
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		a.City = strings.ToLower(strings.TrimSpace(a.City))
		return json.Marshal(a)
	}
	known := func(args json.RawMessage) (json.RawMessage, error) {
		order = append(order, "known")
		var a cityArgs
		_ = json.Unmarshal(args, &a)
		if a.City != "paris" {
			return nil, toolsets.InvalidArguments("city", "unknown city "+a.City, "Use one of: paris.")
		}
		return nil, nil
	}
	reg := mustRegistry(t, nil, mustTool(t)(toolsets.ValidateArguments(tool, trim, known)))
	tests := []struct {
		name, args string
		kind       toolsets.Kind
		ran        string
		order      []string
		message    string
	}{
		{"normalised then accepted", `{"city":"  Paris "}`, toolsets.KindSuccess, "paris", []string{"trim", "known"}, ""},
		{"rejected by the second", `{"city":"Rome"}`, toolsets.KindInvalidArguments, "", []string{"trim", "known"}, "unknown city rome"},
		{"schema first", `{"city":3}`, toolsets.KindInvalidArguments, "", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, order = "", nil
			ret := reg.Call(t.Context(), toolsets.Invocation{CallID: "c", Name: "weather", Arguments: json.RawMessage(tc.args)})
			if ret.Kind != tc.kind || got != tc.ran || strings.Join(order, ",") != strings.Join(tc.order, ",") {
				t.Errorf("kind %s ran %q order %v; want %s %q %v", ret.Kind, got, order, tc.kind, tc.ran, tc.order)
			}
			if tc.message != "" && (ret.Control == nil || ret.Control.Message != tc.message || ret.Control.Field != "city") {
				t.Errorf("control %+v, want message %q", ret.Control, tc.message)
			}
		})
	}
	// A plain error is a refusal too, and CheckArguments runs validators.
	plain := mustRegistry(t, nil, mustTool(t)(toolsets.ValidateArguments(tool, func(json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("not today")
	})))
	if err := plain.CheckArguments("weather", json.RawMessage(`{"city":"x"}`)); err == nil || !strings.Contains(err.Error(), "not today") {
		t.Errorf("CheckArguments: %v", err)
	}
	if _, err := toolsets.ValidateArguments(tool, nil); !errors.Is(err, toolsets.ErrInvalidDefinition) {
		t.Errorf("nil validator: %v", err)
	}
}
