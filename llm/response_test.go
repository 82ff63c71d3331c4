package llm

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResponseValidate(t *testing.T) {
	args := json.RawMessage(`{"left":2}`)
	tests := []struct {
		name    string
		resp    Response
		wantErr bool
	}{
		{"text only", ScriptText("done"), false},
		{"two calls", ScriptToolCalls(ToolCall{ID: "a", Name: "add", Arguments: args}, ToolCall{ID: "b", Name: "add"}), false},
		{"call without id", ScriptToolCalls(ToolCall{Name: "add"}), true},
		{"call without name", ScriptToolCalls(ToolCall{ID: "a"}), true},
		// The model can correct them: the runtime answers the call with
		// invalid_arguments instead of failing the run.
		{"arguments not JSON", ScriptToolCalls(ToolCall{ID: "a", Name: "add", Arguments: json.RawMessage(`{left:2}`)}), false},
		{"duplicate call ids", ScriptToolCalls(ToolCall{ID: "a", Name: "add"}, ToolCall{ID: "a", Name: "sub"}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.resp.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, want error: %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidResponse) {
				t.Errorf("Validate() = %v, want it to match ErrInvalidResponse", err)
			}
		})
	}
}

func TestResponseMessage(t *testing.T) {
	call := ToolCall{ID: "a", Name: "add", Arguments: json.RawMessage(`{"left":2}`)}
	tests := []struct {
		name string
		resp Response
		want Message
	}{
		{"text", ScriptText("done"), Message{Role: RoleAssistant, Parts: []Part{Text{Text: "done"}}}},
		{"calls", ScriptToolCalls(call), Message{Role: RoleAssistant, Parts: []Part{call}}},
		{"text and calls", Response{Text: "adding", ToolCalls: []ToolCall{call}}, Message{Role: RoleAssistant, Parts: []Part{Text{Text: "adding"}, call}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.resp.Message()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("the message does not validate: %v", err)
			}
		})
	}

	resp := ScriptToolCalls(call)
	m := resp.Message()
	m.Parts[0].(ToolCall).Arguments[0] = '['
	if string(resp.ToolCalls[0].Arguments) != `{"left":2}` {
		t.Errorf("the message shares argument memory with the response")
	}
}

func TestRequestCloneIsDeep(t *testing.T) {
	orig := fullRequest()
	clone := orig.Clone()
	if diff := cmp.Diff(orig, clone); diff != "" {
		t.Fatalf("clone differs (-orig +clone):\n%s", diff)
	}
	mutateRequest(clone)
	if diff := cmp.Diff(fullRequest(), orig); diff != "" {
		t.Errorf("mutating the clone changed the original (-want +got):\n%s", diff)
	}
	if (*Request)(nil).Clone() != nil {
		t.Error("nil.Clone() is not nil")
	}
}

func TestRequestLastMessage(t *testing.T) {
	if _, ok := (&Request{}).LastMessage(); ok {
		t.Error("LastMessage() of an empty request reports a message")
	}
	req := &Request{Messages: []Message{UserMessage("a"), UserMessage("b")}}
	got, ok := req.LastMessage()
	if !ok {
		t.Fatal("LastMessage() reports none")
	}
	if diff := cmp.Diff(UserMessage("b"), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A response whose tool call has arguments that are not JSON still
// encodes, and decodes back to the same bytes.
func TestResponseJSONWithRawArguments(t *testing.T) {
	resp := ScriptToolCalls(ToolCall{ID: "a", Name: "add", Arguments: json.RawMessage(`{"x":`)})
	data, err := json.Marshal(resp)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if want := `{"tool_calls":[{"id":"a","name":"add","raw_arguments":"{\"x\":"}]}`; string(data) != want {
		t.Errorf("Marshal:\n got %s\nwant %s", data, want)
	}
	var back Response
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if diff := cmp.Diff(resp, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
