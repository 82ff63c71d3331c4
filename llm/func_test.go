package llm

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFunc(t *testing.T) {
	errBoom := errors.New("boom")
	providerErr := &ModelError{Model: "provider-x", StatusCode: 429, Err: errBoom}
	req := &Request{Messages: []Message{UserMessage("hello")}} // 5 bytes → 2 tokens

	tests := []struct {
		name    string
		fn      func(context.Context, *Request) (*Response, error)
		want    *Response
		wantIs  error // the error must match it
		wantErr *ModelError
	}{
		{
			name: "text gets defaults",
			fn: func(context.Context, *Request) (*Response, error) {
				return &Response{Text: "hi there"}, nil
			},
			want: &Response{Text: "hi there", Model: FuncName, FinishReason: FinishStop, Usage: Usage{InputTokens: 2, OutputTokens: 2, Requests: 1}},
		},
		{
			name: "tool calls get the tool-calls finish reason",
			fn: func(context.Context, *Request) (*Response, error) {
				return &Response{ToolCalls: []ToolCall{{ID: "c", Name: "now"}}}, nil
			},
			want: &Response{ToolCalls: []ToolCall{{ID: "c", Name: "now"}}, Model: FuncName, FinishReason: FinishToolCalls, Usage: Usage{InputTokens: 2, OutputTokens: 1, Requests: 1}},
		},
		{
			name: "set fields are kept",
			fn: func(context.Context, *Request) (*Response, error) {
				return &Response{Text: "x", Model: "m", FinishReason: FinishLength, Usage: Usage{Requests: 1}}, nil
			},
			want: &Response{Text: "x", Model: "m", FinishReason: FinishLength, Usage: Usage{Requests: 1}},
		},
		{
			name:    "a plain error is wrapped",
			fn:      func(context.Context, *Request) (*Response, error) { return nil, errBoom },
			wantIs:  errBoom,
			wantErr: &ModelError{Model: FuncName, Err: errBoom},
		},
		{
			name:    "a model error is passed on",
			fn:      func(context.Context, *Request) (*Response, error) { return nil, providerErr },
			wantIs:  errBoom,
			wantErr: providerErr,
		},
		{
			name:    "no response and no error",
			fn:      func(context.Context, *Request) (*Response, error) { return nil, nil },
			wantIs:  ErrNilResponse,
			wantErr: &ModelError{Model: FuncName, Err: ErrNilResponse},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Func(tt.fn).Request(t.Context(), req)
			if tt.wantIs != nil {
				if !errors.Is(err, tt.wantIs) {
					t.Fatalf("error %v, want it to match %v", err, tt.wantIs)
				}
				me, ok := errors.AsType[*ModelError](err)
				if !ok {
					t.Fatalf("error %v is not a *ModelError", err)
				}
				if me.Model != tt.wantErr.Model || me.StatusCode != tt.wantErr.StatusCode || me.Err != tt.wantErr.Err {
					t.Errorf("ModelError = %#v, want %#v", me, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFuncDecidesFromTheLastToolReturn(t *testing.T) {
	m := Func(func(_ context.Context, req *Request) (*Response, error) {
		last, _ := req.LastMessage()
		if rets := last.ToolReturns(); len(rets) > 0 {
			return &Response{Text: "total is " + rets[0].ContentText()}, nil
		}
		return &Response{ToolCalls: []ToolCall{{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)}}}, nil
	})
	req := &Request{Messages: []Message{UserMessage("Add 2 and 3")}}
	first, err := m.Request(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != "add" {
		t.Fatalf("first answer %+v, want a call to add", first)
	}
	req.Messages = append(req.Messages, first.Message(), Message{Role: RoleUser, Parts: []Part{
		ToolReturn{CallID: "call_add", Name: "add", Content: TextContent("5")},
	}})
	second, err := m.Request(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if second.Text != "total is 5" {
		t.Errorf("second answer %q, want %q", second.Text, "total is 5")
	}
}

func TestFuncDoesNotModifyTheFunctionsResponse(t *testing.T) {
	mine := &Response{Text: "x"}
	got, err := Func(func(context.Context, *Request) (*Response, error) { return mine, nil }).Request(t.Context(), &Request{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Response{Text: "x"}, mine); diff != "" {
		t.Errorf("the function's response was modified (-want +got):\n%s", diff)
	}
	if got == mine {
		t.Error("Request returned the function's own pointer, want a copy")
	}
}

func TestFuncIsNotCalled(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		req    *Request
		wantIs error
	}{
		{"context done", cancelled, &Request{}, context.Canceled},
		{"nil request", t.Context(), nil, ErrNilRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			_, err := Func(func(context.Context, *Request) (*Response, error) {
				called = true
				return &Response{Text: "x"}, nil
			}).Request(tt.ctx, tt.req)
			if !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v, want %v", err, tt.wantIs)
			}
			if called {
				t.Error("the function was called")
			}
		})
	}
}
