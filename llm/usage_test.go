package llm

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUsageAdd(t *testing.T) {
	tests := []struct {
		name string
		a, b Usage
		want Usage
	}{
		{"zero plus zero", Usage{}, Usage{}, Usage{}},
		{"zero plus some", Usage{}, Usage{InputTokens: 3, OutputTokens: 4, Requests: 1}, Usage{InputTokens: 3, OutputTokens: 4, Requests: 1}},
		{"some plus some", Usage{InputTokens: 10, OutputTokens: 2, Requests: 2}, Usage{InputTokens: 3, OutputTokens: 4, Requests: 1}, Usage{InputTokens: 13, OutputTokens: 6, Requests: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a
			got.Add(tt.b)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if total := got.TotalTokens(); total != tt.want.InputTokens+tt.want.OutputTokens {
				t.Errorf("TotalTokens() = %d", total)
			}
		})
	}
}

func TestEstimateUsage(t *testing.T) {
	tests := []struct {
		name string
		req  *Request
		resp *Response
		want Usage
	}{
		{"empty", &Request{}, &Response{}, Usage{Requests: 1}},
		{"one byte is one token", &Request{Instructions: "a"}, &Response{Text: "b"}, Usage{InputTokens: 1, OutputTokens: 1, Requests: 1}},
		{"four bytes are one token", &Request{Instructions: "abcd"}, &Response{Text: "abcd"}, Usage{InputTokens: 1, OutputTokens: 1, Requests: 1}},
		{"five bytes are two tokens", &Request{Instructions: "abcde"}, &Response{Text: "abcde"}, Usage{InputTokens: 2, OutputTokens: 2, Requests: 1}},
		{
			name: "every part and tool counts",
			req: &Request{
				Instructions: "abcd", // 4
				Messages: []Message{
					SystemMessage("ab"),  // 2
					UserMessage("hello"), // 5
					{Role: RoleAssistant, Parts: []Part{
						Text{Text: "ok"}, // 2
						ToolCall{ID: "ignored", Name: "add", Arguments: json.RawMessage(`{}`)}, // 3+2
					}},
					{Role: RoleUser, Parts: []Part{
						ToolReturn{CallID: "ignored", Name: "add", Content: json.RawMessage(`5`)}, // 3+1
						RetryPrompt{CallID: "ignored", Name: "x", Message: "fix"},                 // 1+3
					}},
				},
				Tools: []ToolDefinition{{Name: "add", Description: "Add.", Parameters: json.RawMessage(`{"type":"object"}`)}}, // 3+4+17
			},
			// input 4+2+5+2+5+4+4+24 = 50 bytes → 13 tokens;
			// output "done" 4 + "add" 3 + `{"left":1}` 10 = 17 bytes → 5 tokens.
			resp: &Response{Text: "done", ToolCalls: []ToolCall{{ID: "c", Name: "add", Arguments: json.RawMessage(`{"left":1}`)}}},
			want: Usage{InputTokens: 13, OutputTokens: 5, Requests: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, EstimateUsage(tt.req, tt.resp)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
