package agentspec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/providers"
	"github.com/weft-run/weft/llm/resilient"
)

// model builds an agent's model: each of the primary and its fallbacks
// behind its provider's shared limiter (when the file sets one) and its
// retry policy, the fallbacks asked in order.
func (b *builder) model(p string, m Model) (llm.Model, error) {
	primary, err := b.one(p, ModelRef{Name: m.Name, BaseURL: m.BaseURL, APIKeyEnv: m.APIKeyEnv, Stream: m.Stream, Retry: m.Retry})
	if err != nil {
		return nil, err
	}
	if len(m.Fallbacks) == 0 {
		return primary, nil
	}
	models := []llm.Model{primary}
	for i, fb := range m.Fallbacks {
		next, err := b.one(fmt.Sprintf("%s.fallbacks[%d]", p, i), fb)
		if err != nil {
			return nil, err
		}
		models = append(models, next)
	}
	return resilient.Fallback(models...), nil
}

func (b *builder) one(p string, m ModelRef) (llm.Model, error) {
	model, err := providers.New(m.Name, providers.Options{BaseURL: m.BaseURL, APIKeyEnv: m.APIKeyEnv, NoStreaming: m.Stream != nil && !*m.Stream})
	if errors.Is(err, providers.ErrNoStreamingOption) {
		return nil, b.wrap(p+".stream", "build the model", err)
	}
	if err != nil {
		return nil, b.wrap(p+".name", "build the model", err)
	}
	provider, _, _ := strings.Cut(m.Name, ":")
	if rl, ok := b.f.RateLimits[provider]; ok {
		l := b.limiters[provider]
		if l == nil {
			l = resilient.NewLimiter(rl.RequestsPerMinute, rl.TokensPerMinute)
			b.limiters[provider] = l
		}
		model = resilient.RateLimit(model, l)
	}
	return resilient.Retry(model, m.Retry.options()...), nil
}

// options are the retry options r sets; nil keeps every default.
func (r *Retry) options() []resilient.RetryOption {
	if r == nil {
		return nil
	}
	var opts []resilient.RetryOption
	if r.MaxAttempts > 0 {
		opts = append(opts, resilient.WithMaxAttempts(r.MaxAttempts))
	}
	if r.MaxElapsed > 0 {
		opts = append(opts, resilient.WithMaxElapsed(time.Duration(r.MaxElapsed)))
	}
	// Zero values keep the defaults.
	opts = append(opts, resilient.WithDelays(time.Duration(r.InitialDelay), time.Duration(r.MaxDelay), r.Multiplier))
	if r.Jitter != nil {
		opts = append(opts, resilient.WithJitter(*r.Jitter))
	}
	return opts
}
