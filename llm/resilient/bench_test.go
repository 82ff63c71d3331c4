package resilient_test

import (
	"context"
	"testing"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// The wrappers' own cost on the happy path: a model that answers at once.
func BenchmarkWrappers(b *testing.B) {
	answer := &llm.Response{Text: "done", Model: "bench:m"}
	inner := llm.Model(modelFunc(func(context.Context, *llm.Request) (*llm.Response, error) { return answer, nil }))
	req := request("a prompt of a few words")
	shared := resilient.NewLimiter(1<<30, 1<<30)
	for _, bm := range []struct {
		name string
		m    llm.Model
	}{
		{"bare", inner},
		{"retry", resilient.Retry(inner)},
		{"fallback", resilient.Fallback(inner, inner)},
		{"ratelimit", resilient.RateLimit(inner, shared)},
		{"all", resilient.Fallback(resilient.Retry(resilient.RateLimit(inner, shared)), inner)},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := b.Context()
			for b.Loop() {
				if _, err := bm.m.Request(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type modelFunc func(context.Context, *llm.Request) (*llm.Response, error)

func (f modelFunc) Request(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return f(ctx, req)
}
