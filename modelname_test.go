package weft_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weft-run/weft"
	"github.com/weft-run/weft/events"
	"github.com/weft-run/weft/llm"
)

// provider is a model that names itself as a provider adapter does, and
// answers or fails as told.
type provider struct {
	name string
	err  error
}

func (p provider) ModelName() string { return p.name }

func (p provider) Request(_ context.Context, req *llm.Request) (*llm.Response, error) {
	if p.err != nil {
		return nil, p.err
	}
	return &llm.Response{Text: "hi", Model: p.name, FinishReason: llm.FinishStop, Usage: llm.Usage{Requests: 1, InputTokens: 7, CacheReadTokens: 5}}, nil
}

// model.request and model.response name the model the same way: the
// provider and model id it gives (llm.Named), not its Go type; the cached
// tokens it reports are recorded.
func TestModelNamesAreRecordedAsTheModelGivesThem(t *testing.T) {
	rt := newRuntime(t)
	s := newAgent(t, rt, weft.AgentConfig{Model: provider{name: "openai:gpt-4.1-mini"}}).NewSession()
	if _, err := s.Run(t.Context(), "hello"); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ev := range streamEvents(t, rt, s.ID()) {
		switch ev.Type {
		case events.TypeModelRequest, events.TypeModelResponse:
			var d struct {
				Model string        `json:"model"`
				Usage *events.Usage `json:"usage"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			names = append(names, d.Model)
			if ev.Type == events.TypeModelResponse && (d.Usage == nil || d.Usage.CacheReadTokens != 5) {
				t.Errorf("model.response usage %+v, want 5 cache-read tokens", d.Usage)
			}
		}
	}
	if len(names) != 2 || names[0] != "openai:gpt-4.1-mini" || names[1] != names[0] {
		t.Errorf("recorded model names %q, want openai:gpt-4.1-mini twice", names)
	}
}

// A run that fails on the model says which provider and why, and nothing
// of the prompt.
func TestModelFailureNamesTheProvider(t *testing.T) {
	rt := newRuntime(t)
	const prompt = "my private prompt text"
	err := &llm.ModelError{Provider: "anthropic", Model: "claude-x", StatusCode: 529, Type: "overloaded_error", Retryable: true, Err: errString("Overloaded")}
	s := newAgent(t, rt, weft.AgentConfig{Model: provider{name: "anthropic:claude-x", err: err}}).NewSession()
	_, runErr := s.Run(t.Context(), prompt)
	var re *weft.RunError
	if !errors.As(runErr, &re) {
		t.Fatalf("Run: %v, want a *weft.RunError", runErr)
	}
	msg := re.Error()
	for _, want := range []string{"anthropic", "claude-x", "529", "overloaded_error", "Overloaded"} {
		if !strings.Contains(msg, want) {
			t.Errorf("run error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, prompt) {
		t.Errorf("run error %q carries the prompt", msg)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
