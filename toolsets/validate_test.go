package toolsets_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-run/weft/toolsets"
)

type ticketArgs struct {
	TicketID string   `json:"ticket_id" jsonschema:"the ticket to fetch"`
	History  bool     `json:"include_history,omitempty"`
	Priority int      `json:"priority,omitempty"`
	Labels   []string `json:"labels,omitempty"`
}

func TestValidationMessages(t *testing.T) {
	fetch, err := toolsets.NewFunc("fetch_ticket", echo[ticketArgs])
	if err != nil {
		t.Fatal(err)
	}
	enumTool, err := toolsets.NewFunc("set_mode", echo[map[string]any], toolsets.WithSchema(`{
		"type":"object",
		"properties":{"mode":{"enum":["review","ship"]},"n":{"type":"integer","minimum":1,"maximum":3}},
		"additionalProperties":true}`))
	if err != nil {
		t.Fatal(err)
	}
	general, err := toolsets.NewFunc("general", echo[map[string]any], toolsets.WithSchema(`{
		"type":"object","properties":{"id":{"type":"string","pattern":"^T-[0-9]+$"}},"required":["id"]}`))
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(fetch, enumTool, general); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, args string
		field            string
		message, fix     []string // substrings
	}{
		{"invalid JSON", "fetch_ticket", `{"ticket_id":`, "", []string{"not valid JSON"}, []string{"single JSON object"}},
		{"not an object", "fetch_ticket", `["T-1"]`, "", []string{"the arguments must be an object, got an array"}, []string{"JSON object"}},
		{"missing required", "fetch_ticket", `{}`, "ticket_id", []string{`missing required argument "ticket_id"`}, []string{`"ticket_id" set to a string (the ticket to fetch)`}},
		{"unexpected field", "fetch_ticket", `{"ticket_id":"T-1","verbose":true}`, "verbose", []string{`unexpected argument "verbose"`}, []string{`Remove "verbose"`, `"include_history", "labels", "priority", "ticket_id"`}},
		{"wrong type", "fetch_ticket", `{"ticket_id":42}`, "ticket_id", []string{`argument "ticket_id" must be a string, got a number`}, []string{`Pass a string for "ticket_id"`}},
		{"fraction for integer", "fetch_ticket", `{"ticket_id":"T","priority":1.5}`, "priority", []string{`argument "priority" must be an integer, got a number`}, nil},
		{"array item", "fetch_ticket", `{"ticket_id":"T","labels":["a",3]}`, "labels[1]", []string{`argument "labels[1]" must be a string`}, nil},
		{"two problems", "fetch_ticket", `{"verbose":1}`, "ticket_id", []string{`missing required argument "ticket_id"`, `unexpected argument "verbose"`}, nil},
		{"enum", "set_mode", `{"mode":"yolo"}`, "mode", []string{`argument "mode" must be one of ["review","ship"], got "yolo"`}, nil},
		{"maximum", "set_mode", `{"n":9}`, "n", []string{`argument "n" must be at most 3, got 9`}, nil},
		{"general validator", "general", `{"id":"X"}`, "", []string{"/properties/id", "pattern"}, []string{"Correct the arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ret := reg.Call(t.Context(), toolsets.Invocation{CallID: "c1", Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if ret.Kind != toolsets.KindInvalidArguments {
				t.Fatalf("kind = %s, want invalid_arguments (%s)", ret.Kind, ret.Content)
			}
			if ret.Attempts != 0 {
				t.Errorf("attempts = %d: the tool ran", ret.Attempts)
			}
			if ret.Control.Field != tt.field {
				t.Errorf("field = %q, want %q", ret.Control.Field, tt.field)
			}
			for _, m := range tt.message {
				if !strings.Contains(ret.Control.Message, m) {
					t.Errorf("message %q does not contain %q", ret.Control.Message, m)
				}
			}
			for _, f := range tt.fix {
				if !strings.Contains(ret.Control.HowToFix, f) {
					t.Errorf("how to fix %q does not contain %q", ret.Control.HowToFix, f)
				}
			}
			var content string
			if err := json.Unmarshal(ret.ModelContent(), &content); err != nil || !strings.Contains(content, ret.Control.HowToFix) {
				t.Errorf("model content %s lacks the fix (%v)", ret.ModelContent(), err)
			}
		})
	}
}

func TestValidArgumentsReachTool(t *testing.T) {
	fetch, err := toolsets.NewFunc("fetch_ticket", echo[ticketArgs])
	if err != nil {
		t.Fatal(err)
	}
	reg := toolsets.NewRegistry()
	if err := reg.Register(fetch); err != nil {
		t.Fatal(err)
	}
	ret := reg.Call(t.Context(), toolsets.Invocation{Name: "fetch_ticket", Arguments: json.RawMessage(`{"ticket_id":"T-1","priority":2.0,"labels":["x"]}`)})
	if ret.Kind != toolsets.KindSuccess {
		t.Fatalf("kind = %s: %s", ret.Kind, ret.Content)
	}
	if diff := cmp.Diff(ticketArgs{TicketID: "T-1", Priority: 2, Labels: []string{"x"}}, ret.Value); diff != "" {
		t.Errorf("value (-want +got):\n%s", diff)
	}
}
