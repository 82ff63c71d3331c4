// Package providers builds a model from its name, as weft chat's --model
// flag and agent specs give it:
//
//	openai:MODEL             OpenAI (key from OPENAI_API_KEY)
//	anthropic:MODEL          Anthropic (key from ANTHROPIC_API_KEY)
//	openai-compatible:MODEL  any server of the Chat Completions API at
//	                         Options.BaseURL (Ollama, vLLM, llama.cpp,
//	                         LM Studio, OpenRouter…), with a key only when
//	                         Options.APIKeyEnv names one
//
// Keys are read from the environment only, by variable name
// (Options.APIKeyEnv, or the provider's own variable): a spec or a flag
// never holds a key, so none reaches a file, an event or a log.
package providers

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/anthropic"
	"github.com/weft-run/weft/llm/openai"
)

// The providers New knows.
const (
	OpenAI           = "openai"
	Anthropic        = "anthropic"
	OpenAICompatible = "openai-compatible"
)

// Errors of New, matched with errors.Is.
var (
	// ErrBadName: a model name that is not PROVIDER:MODEL.
	ErrBadName = errors.New("providers: a model is named PROVIDER:MODEL")
	// ErrUnknownProvider: a provider New does not know.
	ErrUnknownProvider = errors.New("providers: unknown provider")
	// ErrNoKey: the environment variable that should hold the key is
	// empty.
	ErrNoKey = errors.New("providers: no API key")
	// ErrNoBaseURL: openai-compatible without a base URL.
	ErrNoBaseURL = errors.New("providers: openai-compatible needs a base URL")
	// ErrNoStreamingOption: Options.NoStreaming for a provider whose
	// model always streams.
	ErrNoStreamingOption = errors.New("providers: turning streaming off is for openai and openai-compatible models only")
)

// Options are what a model name cannot say.
type Options struct {
	// BaseURL is the API's base URL: required for openai-compatible,
	// optional for the others (a proxy, Azure OpenAI).
	BaseURL string
	// APIKeyEnv names the environment variable holding the API key;
	// empty means the provider's own (OPENAI_API_KEY, ANTHROPIC_API_KEY),
	// and none for openai-compatible.
	APIKeyEnv string
	// NoStreaming makes the model send ordinary (non-streamed) requests
	// (openai.WithoutStreaming): for OpenAI-compatible servers whose
	// streamed tool calls are broken. OpenAI and openai-compatible only.
	NoStreaming bool
}

// New returns the model name names ("openai:gpt-4.1-mini").
func New(name string, o Options) (llm.Model, error) {
	provider, id, ok := strings.Cut(name, ":")
	if !ok || provider == "" || id == "" {
		return nil, fmt.Errorf("%w, got %q", ErrBadName, name)
	}
	key, err := keyFrom(provider, o.APIKeyEnv)
	if err != nil {
		return nil, err
	}
	switch provider {
	case OpenAI, OpenAICompatible:
		opts := []openai.Option{}
		switch {
		case o.BaseURL != "":
			opts = append(opts, openai.WithBaseURL(o.BaseURL))
		case provider == OpenAICompatible:
			return nil, ErrNoBaseURL
		}
		if key != "" {
			opts = append(opts, openai.WithAPIKey(key))
		}
		if provider == OpenAICompatible {
			opts = append(opts, openai.WithProviderName(OpenAICompatible))
		}
		if o.NoStreaming {
			opts = append(opts, openai.WithoutStreaming())
		}
		return openai.New(id, opts...)
	case Anthropic:
		if o.NoStreaming {
			return nil, fmt.Errorf("%w: %s", ErrNoStreamingOption, provider)
		}
		opts := []anthropic.Option{anthropic.WithAPIKey(key)}
		if o.BaseURL != "" {
			opts = append(opts, anthropic.WithBaseURL(o.BaseURL))
		}
		return anthropic.New(id, opts...)
	}
	return nil, fmt.Errorf("%w %q (known: %s, %s, %s)", ErrUnknownProvider, provider, OpenAI, Anthropic, OpenAICompatible)
}

// keyFrom reads the API key of provider from the environment variable env
// (or the provider's own).
func keyFrom(provider, env string) (string, error) {
	if env == "" {
		switch provider {
		case OpenAI:
			env = "OPENAI_API_KEY"
		case Anthropic:
			env = anthropic.EnvAPIKey
		default:
			return "", nil
		}
	}
	key := os.Getenv(env)
	if key == "" {
		return "", fmt.Errorf("%w: $%s is empty", ErrNoKey, env)
	}
	return key, nil
}
