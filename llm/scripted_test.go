package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScriptedAnswersInOrder(t *testing.T) {
	m := NewScripted(
		ScriptToolCalls(ToolCall{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)}),
		ScriptText("done"),
	)
	req := &Request{Messages: []Message{UserMessage("Add two numbers")}}

	steps := []struct {
		name      string
		want      *Response
		wantErr   error
		remaining int
	}{
		{
			name: "first response: the tool call",
			want: &Response{
				ToolCalls:    []ToolCall{{ID: "call_add", Name: "add", Arguments: json.RawMessage(`{"left":2,"right":3}`)}},
				Model:        ScriptedName,
				FinishReason: FinishToolCalls,
				// input: "Add two numbers" = 15 bytes → 4 tokens;
				// output: "add" + `{"left":2,"right":3}` = 3+20 bytes → 6 tokens.
				Usage: Usage{InputTokens: 4, OutputTokens: 6, Requests: 1},
			},
			remaining: 1,
		},
		{
			name: "second response: the text",
			want: &Response{
				Text:         "done",
				Model:        ScriptedName,
				FinishReason: FinishStop,
				Usage:        Usage{InputTokens: 4, OutputTokens: 1, Requests: 1},
			},
			remaining: 0,
		},
		{name: "third request: the script is used up", wantErr: ErrNoResponses, remaining: 0},
	}
	for _, s := range steps {
		got, err := m.Request(t.Context(), req)
		if s.wantErr != nil {
			if !errors.Is(err, s.wantErr) {
				t.Fatalf("%s: error %v, want %v", s.name, err, s.wantErr)
			}
			me, ok := errors.AsType[*ModelError](err)
			if !ok || me.Model != ScriptedName {
				t.Fatalf("%s: error %#v, want a *ModelError from %q", s.name, err, ScriptedName)
			}
		} else {
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			if diff := cmp.Diff(s.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", s.name, diff)
			}
		}
		if r := m.Remaining(); r != s.remaining {
			t.Errorf("%s: Remaining() = %d, want %d", s.name, r, s.remaining)
		}
	}
	if n := len(m.Requests()); n != 3 {
		t.Errorf("recorded %d requests, want 3 (failed ones included)", n)
	}
}

func TestScriptedKeepsWhatTheScriptSets(t *testing.T) {
	scripted := Response{
		Text:         "partial",
		Model:        "gpt-test",
		FinishReason: FinishLength,
		Usage:        Usage{InputTokens: 100, OutputTokens: 50, Requests: 1},
	}
	got, err := NewScripted(scripted).Request(t.Context(), &Request{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&scripted, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestAlwaysText(t *testing.T) {
	m := AlwaysText("ready")
	for i := range 5 {
		got, err := m.Request(t.Context(), &Request{Messages: []Message{UserMessage(fmt.Sprint("prompt ", i))}})
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got.Text != "ready" || got.FinishReason != FinishStop || len(got.ToolCalls) != 0 {
			t.Fatalf("request %d: got %+v, want the text \"ready\"", i, got)
		}
	}
	if r := m.Remaining(); r != -1 {
		t.Errorf("Remaining() = %d, want -1", r)
	}
	if n := len(m.Requests()); n != 5 {
		t.Errorf("recorded %d requests, want 5", n)
	}
}

func TestScriptedRecordsDeepCopies(t *testing.T) {
	script := []Response{ScriptToolCalls(ToolCall{ID: "c1", Name: "add", Arguments: json.RawMessage(`{"left":1}`)})}
	m := NewScripted(script...)
	script[0].ToolCalls[0].Arguments[2] = 'X' // the caller's script is not the model's

	req := fullRequest()
	got, err := m.Request(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.ToolCalls[0].Arguments) != `{"left":1}` {
		t.Errorf("answer arguments = %s, want the script as it was given", got.ToolCalls[0].Arguments)
	}

	// Mutate everything reachable from the request the caller still holds.
	mutateRequest(req)
	recorded := m.Requests()
	if diff := cmp.Diff([]*Request{fullRequest()}, recorded); diff != "" {
		t.Errorf("recorded request changed with the caller's (-want +got):\n%s", diff)
	}
	// And the copies Requests returns are the caller's own.
	mutateRequest(recorded[0])
	if diff := cmp.Diff([]*Request{fullRequest()}, m.Requests()); diff != "" {
		t.Errorf("recorded request changed through Requests() (-want +got):\n%s", diff)
	}
}

func TestScriptedContextDone(t *testing.T) {
	m := NewScripted(ScriptText("done"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := m.Request(ctx, &Request{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Request on a cancelled context = %v, want context.Canceled", err)
	}
	if _, ok := errors.AsType[*ModelError](err); !ok {
		t.Errorf("error %v is not a *ModelError", err)
	}
	if r := m.Remaining(); r != 1 {
		t.Errorf("Remaining() = %d after a cancelled request, want 1 (nothing consumed)", r)
	}
	got, err := m.Request(t.Context(), &Request{})
	if err != nil || got.Text != "done" {
		t.Errorf("next request = %+v, %v; want the scripted text", got, err)
	}
}

func TestScriptedNilRequest(t *testing.T) {
	m := NewScripted(ScriptText("done"))
	if _, err := m.Request(t.Context(), nil); !errors.Is(err, ErrNilRequest) {
		t.Fatalf("Request(nil) = %v, want ErrNilRequest", err)
	}
	if diff := cmp.Diff([]*Request{nil}, m.Requests()); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func TestScriptedConcurrent(t *testing.T) {
	const n = 32
	script := make([]Response, n)
	want := make([]string, n)
	for i := range script {
		want[i] = fmt.Sprintf("answer %02d", i)
		script[i] = ScriptText(want[i])
	}
	m := NewScripted(script...)

	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got []string
	)
	for i := range n {
		wg.Go(func() {
			resp, err := m.Request(t.Context(), &Request{Messages: []Message{UserMessage(fmt.Sprint(i))}})
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			mu.Lock()
			got = append(got, resp.Text)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("each scripted answer exactly once (-want +got):\n%s", diff)
	}
	if r := len(m.Requests()); r != n {
		t.Errorf("recorded %d requests, want %d", r, n)
	}
	if _, err := m.Request(t.Context(), &Request{}); !errors.Is(err, ErrNoResponses) {
		t.Errorf("request after the script = %v, want ErrNoResponses", err)
	}
}

// mutateRequest changes every piece of memory reachable from r.
func mutateRequest(r *Request) {
	r.Instructions = "changed"
	for i := range r.Messages {
		for j, p := range r.Messages[i].Parts {
			switch p := p.(type) {
			case ToolCall:
				p.Arguments[0] = '['
			case ToolReturn:
				p.Content[0] = '['
			}
			r.Messages[i].Parts[j] = Text{Text: "changed"}
		}
	}
	r.Messages = append(r.Messages, UserMessage("more"))
	for i := range r.Tools {
		r.Tools[i].Parameters[0] = '['
		r.Tools[i].Name = "changed"
	}
	*r.Settings.Temperature = 9
	*r.Settings.TopP = 9
	*r.Settings.Seed = 9
	r.Settings.StopSequences[0] = "changed"
	for k, v := range r.Settings.Provider {
		v[0] = '['
		r.Settings.Provider[k+"2"] = v
	}
	r.Run.Metadata["tenant"] = "changed"
}
