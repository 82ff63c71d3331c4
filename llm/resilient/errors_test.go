package resilient_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// The wrappers' errors hold the models' errors and counts, never the
// request's content or a key from the environment.
func TestErrorsHoldNoRequestContent(t *testing.T) {
	const key = "sk-test-resilient-0123456789"
	t.Setenv("OPENAI_API_KEY", key)
	prompt := "the private prompt " + strings.Repeat("p", 400)
	req := request(prompt)
	req.Instructions = "the private instructions"
	e := statusErr(429, true, time.Second)
	tests := []struct {
		name string
		do   func(ctx context.Context) error
	}{
		{"exhausted", func(ctx context.Context) error {
			_, err := resilient.Retry(newFake("openai:gpt", fail(e))).Request(ctx, req)
			return err
		}},
		{"all failed", func(ctx context.Context) error {
			_, err := resilient.Fallback(newFake("openai:a", fail(e)), newFake("openai:b", fail(e))).Request(ctx, req)
			return err
		}},
		{"too large", func(ctx context.Context) error {
			_, err := resilient.RateLimit(newFake("openai:gpt"), resilient.NewLimiter(0, 10)).Request(ctx, req)
			return err
		}},
		{"ended during a wait", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
			defer cancel()
			_, err := resilient.Retry(newFake("openai:gpt", fail(e)), resilient.WithJitter(0),
				resilient.WithDelays(time.Hour, time.Hour, 1), resilient.WithMaxElapsed(2*time.Hour)).Request(ctx, req)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				err := tt.do(t.Context())
				if err == nil {
					t.Fatal("no error")
				}
				for _, secret := range []string{key, "private"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error %q holds %q", err, secret)
					}
				}
			})
		})
	}
	var _ llm.Model = resilient.Retry(newFake("m"))
}
