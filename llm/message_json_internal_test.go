package llm

import (
	"bytes"
	"testing"
)

// MarshalJSON writes, byte for byte, what encoding the wire struct with
// json.Marshal writes.
func TestMarshalJSONMatchesWire(t *testing.T) {
	msgs := []Message{
		UserMessage("hi <there> & \"you\""),
		{Role: RoleAssistant, Parts: []Part{Text{Text: "a"}, ToolCall{ID: "c1", Name: "n", Arguments: []byte(`{"x":1}`)}}},
		{Role: RoleAssistant, Parts: []Part{ToolCall{ID: "c2", Name: "n", Arguments: []byte(`{"x":`)}}},
		{Role: RoleAssistant},
		{Role: Role("odd \"role\""), Parts: []Part{Text{Text: "b"}}},
		{Role: RoleSystem, Parts: []Part{Instructions{Text: "be <brief> & \u2028 kind"}}},
		{Role: RoleUser, Parts: []Part{ToolReturn{CallID: "c1", Name: "n", Content: []byte(`{"html":"<b>&amp;</b>"}`), IsError: true},
			RetryPrompt{CallID: "c2", Name: "n", Message: "try <again> \xff", Retries: 2}}},
	}
	// A part larger than the pooled encoder's buffer keeps, then small
	// ones: the encoder lets the large buffer go and still writes.
	big := string(bytes.Repeat([]byte("x"), 100<<10))
	msgs = append(msgs, UserMessage(big), UserMessage("after"), UserMessage(big), UserMessage("after <again>"))
	for i, m := range msgs {
		got, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		want, err := m.marshalWire()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("message %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
