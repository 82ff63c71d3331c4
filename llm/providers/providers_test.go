package providers_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/providers"
)

func TestNew(t *testing.T) {
	const secret = "sk-test-0123456789abcdef"
	t.Setenv("OPENAI_API_KEY", secret)
	t.Setenv("ANTHROPIC_API_KEY", secret)
	t.Setenv("MY_KEY", "")
	tests := []struct {
		name    string
		o       providers.Options
		model   string // the model's name in the log
		wantErr error
	}{
		{name: "openai:gpt-4.1-mini", model: "openai:gpt-4.1-mini"},
		{name: "anthropic:claude-sonnet-4-5", model: "anthropic:claude-sonnet-4-5"},
		{name: "openai-compatible:llama3", o: providers.Options{BaseURL: "http://127.0.0.1:11434/v1"}, model: "openai-compatible:llama3"},
		{name: "openai-compatible:llama3", wantErr: providers.ErrNoBaseURL},
		{name: "openai-compatible:x", o: providers.Options{BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "MY_KEY"}, wantErr: providers.ErrNoKey},
		{name: "gpt-4.1", wantErr: providers.ErrBadName},
		{name: "openai:", wantErr: providers.ErrBadName},
		{name: "gemini:pro", wantErr: providers.ErrUnknownProvider},
	}
	for _, tt := range tests {
		m, err := providers.New(tt.name, tt.o)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: New = %v, want %v", tt.name, err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("%s: the error shows the key", tt.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: New: %v", tt.name, err)
			continue
		}
		if got := llm.NameOf(m); got != tt.model {
			t.Errorf("%s: named %q, want %q", tt.name, got, tt.model)
		}
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	if _, err := providers.New("anthropic:claude-x", providers.Options{}); !errors.Is(err, providers.ErrNoKey) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("anthropic without a key: %v, want ErrNoKey naming ANTHROPIC_API_KEY", err)
	}
}
