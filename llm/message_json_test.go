package llm

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMessageJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want string // the durable JSON form
	}{
		{
			name: "system instructions",
			msg:  SystemMessage("Be brief."),
			want: `{"role":"system","parts":[{"kind":"instructions","text":"Be brief."}]}`,
		},
		{
			name: "user prompt",
			msg:  UserMessage("Add two numbers"),
			want: `{"role":"user","parts":[{"kind":"user_prompt","text":"Add two numbers"}]}`,
		},
		{
			name: "assistant text and tool calls",
			msg: Message{Role: RoleAssistant, Parts: []Part{
				Text{Text: "Adding."},
				ToolCall{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)},
				ToolCall{ID: "call_noargs", Name: "now"},
			}},
			want: `{"role":"assistant","parts":[{"kind":"text","text":"Adding."},` +
				`{"kind":"tool_call","id":"call_add","name":"add","arguments":{"left":2,"right":3}},` +
				`{"kind":"tool_call","id":"call_noargs","name":"now"}]}`,
		},
		{
			name: "tool call whose arguments are not JSON",
			msg: Message{Role: RoleAssistant, Parts: []Part{
				ToolCall{ID: "call_bad", Name: "add", Arguments: json.RawMessage(`{"left":`)},
			}},
			want: `{"role":"assistant","parts":[{"kind":"tool_call","id":"call_bad","name":"add","raw_arguments":"{\"left\":"}]}`,
		},
		{
			name: "tool returns and a retry prompt",
			msg: Message{Role: RoleUser, Parts: []Part{
				ToolReturn{CallID: "call_add", Name: "add", Content: json.RawMessage(`{"total":5}`)},
				ToolReturn{CallID: "call_text", Name: "echo", Content: TextContent("hi \"there\"")},
				ToolReturn{CallID: "call_fail", Name: "fetch", Content: TextContent("boom"), IsError: true},
				RetryPrompt{CallID: "call_bad", Name: "lookup", Message: "ticket_id is required", Retries: 2},
				RetryPrompt{Message: "answer in JSON"},
			}},
			want: `{"role":"user","parts":[` +
				`{"kind":"tool_return","call_id":"call_add","name":"add","content":{"total":5}},` +
				`{"kind":"tool_return","call_id":"call_text","name":"echo","content":"hi \"there\""},` +
				`{"kind":"tool_return","call_id":"call_fail","name":"fetch","content":"boom","is_error":true},` +
				`{"kind":"retry_prompt","call_id":"call_bad","name":"lookup","message":"ticket_id is required","retries":2},` +
				`{"kind":"retry_prompt","message":"answer in JSON"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.msg)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal:\n got %s\nwant %s", got, tt.want)
			}
			var back Message
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if diff := cmp.Diff(tt.msg, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessageUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		wantIs   error
		wantKind string // for ErrUnknownPart: the kind reported
	}{
		{"unknown part kind", `{"role":"assistant","parts":[{"kind":"thinking","text":"hm"}]}`, ErrUnknownPart, "thinking"},
		{"empty part kind", `{"role":"assistant","parts":[{"kind":"","text":"hm"}]}`, ErrUnknownPart, ""},
		{"part without kind", `{"role":"assistant","parts":[{"text":"hm"}]}`, ErrInvalidMessage, ""},
		{"part is not an object", `{"role":"assistant","parts":["text"]}`, ErrInvalidMessage, ""},
		{"unknown field in a part", `{"role":"assistant","parts":[{"kind":"text","text":"a","extra":1}]}`, ErrInvalidMessage, ""},
		{"unknown field in the message", `{"role":"user","parts":[{"kind":"user_prompt","text":"a"}],"name":"x"}`, ErrInvalidMessage, ""},
		{"wrong field type", `{"role":"user","parts":[{"kind":"user_prompt","text":7}]}`, ErrInvalidMessage, ""},
		{"unknown role", `{"role":"tool","parts":[{"kind":"user_prompt","text":"a"}]}`, ErrInvalidMessage, ""},
		{"missing role", `{"parts":[{"kind":"user_prompt","text":"a"}]}`, ErrInvalidMessage, ""},
		{"no parts", `{"role":"user","parts":[]}`, ErrInvalidMessage, ""},
		{"part in the wrong role", `{"role":"user","parts":[{"kind":"tool_call","id":"c","name":"add"}]}`, ErrInvalidMessage, ""},
		{"tool call without id", `{"role":"assistant","parts":[{"kind":"tool_call","name":"add"}]}`, ErrInvalidMessage, ""},
		{"tool call without name", `{"role":"assistant","parts":[{"kind":"tool_call","id":"c"}]}`, ErrInvalidMessage, ""},
		{"tool return without call id", `{"role":"user","parts":[{"kind":"tool_return","name":"add"}]}`, ErrInvalidMessage, ""},
		{"tool return without name", `{"role":"user","parts":[{"kind":"tool_return","call_id":"c"}]}`, ErrInvalidMessage, ""},
		{"retry prompt without message", `{"role":"user","parts":[{"kind":"retry_prompt","call_id":"c","name":"add"}]}`, ErrInvalidMessage, ""},
		{"malformed JSON", `{"role":"user","parts":[`, ErrInvalidMessage, ""},
		{"raw arguments beside arguments", `{"role":"assistant","parts":[{"kind":"tool_call","id":"c","name":"add","arguments":{},"raw_arguments":"{"}]}`, ErrInvalidMessage, ""},
		{"raw arguments that are JSON", `{"role":"assistant","parts":[{"kind":"tool_call","id":"c","name":"add","raw_arguments":"{}"}]}`, ErrInvalidMessage, ""},
		{"trailing data", `{"role":"user","parts":[{"kind":"user_prompt","text":"a"}]} {}`, ErrInvalidMessage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := UserMessage("untouched")
			m := before
			err := m.UnmarshalJSON([]byte(tt.data))
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("UnmarshalJSON(%s) = %v, want an error matching %v", tt.data, err, tt.wantIs)
			}
			if tt.wantIs == ErrUnknownPart {
				upe, ok := errors.AsType[*UnknownPartError](err)
				if !ok {
					t.Fatalf("error %v is not an *UnknownPartError", err)
				}
				if upe.Kind != tt.wantKind {
					t.Errorf("UnknownPartError.Kind = %q, want %q", upe.Kind, tt.wantKind)
				}
			}
			if diff := cmp.Diff(before, m); diff != "" {
				t.Errorf("message changed by a failed decode (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessageValidate(t *testing.T) {
	tests := []struct {
		name    string
		msg     Message
		wantErr bool
	}{
		{"user prompt", UserMessage("hi"), false},
		{"instructions in user role", Message{Role: RoleUser, Parts: []Part{Instructions{Text: "x"}}}, true},
		{"text in system role", Message{Role: RoleSystem, Parts: []Part{Text{Text: "x"}}}, true},
		{"tool return in assistant role", Message{Role: RoleAssistant, Parts: []Part{ToolReturn{CallID: "c", Name: "n"}}}, true},
		{"nil part", Message{Role: RoleUser, Parts: []Part{nil}}, true},
		{"arguments not JSON are the model's to correct", Message{Role: RoleAssistant, Parts: []Part{ToolCall{ID: "c", Name: "n", Arguments: json.RawMessage(`{`)}}}, false},
		{"invalid content", Message{Role: RoleUser, Parts: []Part{ToolReturn{CallID: "c", Name: "n", Content: json.RawMessage(`nope`)}}}, true},
		{"empty role", Message{Parts: []Part{UserPrompt{Text: "x"}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.msg.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, want error: %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalidMessage) {
				t.Errorf("Validate() = %v, want it to match ErrInvalidMessage", err)
			}
		})
	}
}

func TestMessageMarshalNilPart(t *testing.T) {
	_, err := json.Marshal(Message{Role: RoleUser, Parts: []Part{nil}})
	if !errors.Is(err, ErrInvalidMessage) {
		t.Fatalf("Marshal with a nil part = %v, want ErrInvalidMessage", err)
	}
}

func TestMessageHelpers(t *testing.T) {
	m := Message{Role: RoleUser, Parts: []Part{
		ToolReturn{CallID: "a", Name: "add", Content: json.RawMessage(`{"total":5}`)},
		RetryPrompt{CallID: "b", Name: "lookup", Message: "fix it"},
		ToolReturn{CallID: "c", Name: "echo", Content: TextContent("hi")},
	}}
	gotIDs := []string{}
	for _, r := range m.ToolReturns() {
		gotIDs = append(gotIDs, r.CallID)
	}
	if diff := cmp.Diff([]string{"a", "c"}, gotIDs); diff != "" {
		t.Errorf("ToolReturns ids (-want +got):\n%s", diff)
	}
	if got := m.RetryPrompts(); len(got) != 1 || got[0].Message != "fix it" {
		t.Errorf("RetryPrompts() = %+v", got)
	}
	if got := m.ToolCalls(); got != nil {
		t.Errorf("ToolCalls() = %+v, want none", got)
	}

	contents := []struct {
		name    string
		content json.RawMessage
		want    string
	}{
		{"json string", TextContent("a \"quoted\" line"), `a "quoted" line`},
		{"object", json.RawMessage(`{"total":5}`), `{"total":5}`},
		{"none", nil, ""},
	}
	for _, c := range contents {
		t.Run(c.name, func(t *testing.T) {
			if got := (ToolReturn{Content: c.content}).ContentText(); got != c.want {
				t.Errorf("ContentText() = %q, want %q", got, c.want)
			}
		})
	}
}

func TestRequestJSONRoundTrip(t *testing.T) {
	req := fullRequest()
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	var back Request
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if diff := cmp.Diff(req, &back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	var bad Request
	err = json.Unmarshal([]byte(`{"messages":[{"role":"user","parts":[{"kind":"image","url":"x"}]}]}`), &bad)
	if !errors.Is(err, ErrUnknownPart) {
		t.Errorf("Unmarshal of a request with an unknown part = %v, want ErrUnknownPart", err)
	}
}

func TestResponseJSONRoundTrip(t *testing.T) {
	resp := &Response{
		Text:         "done",
		ToolCalls:    []ToolCall{{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)}},
		Usage:        Usage{InputTokens: 10, OutputTokens: 3, Requests: 1},
		Model:        "scripted",
		FinishReason: FinishToolCalls,
	}
	data, err := json.Marshal(resp)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	want := `{"text":"done","tool_calls":[{"id":"call_add","name":"add","arguments":{"left":2,"right":3}}],` +
		`"usage":{"input_tokens":10,"output_tokens":3,"requests":1},"model":"scripted","finish_reason":"tool_calls"}`
	if string(data) != want {
		t.Errorf("Marshal:\n got %s\nwant %s", data, want)
	}
	var back Response
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if diff := cmp.Diff(resp, &back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// fullRequest returns a request with every field set.
func fullRequest() *Request {
	temp, topP, seed := 0.2, 0.9, int64(7)
	return &Request{
		Instructions: "You add numbers.",
		Messages: []Message{
			SystemMessage("Be brief."),
			UserMessage("Add 2 and 3"),
			{Role: RoleAssistant, Parts: []Part{ToolCall{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)}}},
			{Role: RoleUser, Parts: []Part{ToolReturn{CallID: "call_add", Name: "add", Content: json.RawMessage(`{"total":5}`)}}},
		},
		Tools: []ToolDefinition{{
			Name:        "add",
			Description: "Add two numbers.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"left":{"type":"integer"},"right":{"type":"integer"}}}`),
			Strict:      true,
		}},
		Settings: Settings{
			Temperature:   &temp,
			TopP:          &topP,
			MaxTokens:     256,
			StopSequences: []string{"END"},
			Seed:          &seed,
			Provider:      map[string]json.RawMessage{"reasoning_effort": json.RawMessage(`"low"`)},
		},
		Run: RunInfo{SessionID: "s1", RunID: "r1", Step: 2, Metadata: map[string]string{"tenant": "acme"}},
	}
}

func FuzzMessageUnmarshal(f *testing.F) {
	for _, seed := range []string{
		`{"role":"system","parts":[{"kind":"instructions","text":"Be brief."}]}`,
		`{"role":"assistant","parts":[{"kind":"text","text":"a"},{"kind":"tool_call","id":"c","name":"add","arguments":{"left":2}}]}`,
		`{"role":"user","parts":[{"kind":"tool_return","call_id":"c","name":"add","content":"x","is_error":true},{"kind":"retry_prompt","message":"m","retries":1}]}`,
		`{"role":"user","parts":[{"kind":"thinking"}]}`,
		`{"role":"user","parts":[]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if err := m.UnmarshalJSON(data); err != nil {
			if !errors.Is(err, ErrInvalidMessage) && !errors.Is(err, ErrUnknownPart) {
				t.Fatalf("Unmarshal error %v matches neither ErrInvalidMessage nor ErrUnknownPart", err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("decoded message does not validate: %v", err)
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal of a decoded message: %v", err)
		}
		var back Message
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("Unmarshal of a re-encoded message %s: %v", enc, err)
		}
		enc2, err := json.Marshal(back)
		if err != nil {
			t.Fatalf("second Marshal: %v", err)
		}
		if string(enc) != string(enc2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", enc, enc2)
		}
	})
}
