package resilient_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/weft-run/weft/llm"
	"github.com/weft-run/weft/llm/resilient"
)

// A model that is rate limited twice answers on the third attempt; a
// fallback answers when the primary refuses the request.
func Example() {
	ctx := context.Background()
	var calls atomic.Int32
	flaky := llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		if calls.Add(1) <= 2 {
			return nil, &llm.ModelError{Provider: "example", Model: "primary", StatusCode: 429, Retryable: true,
				RetryAfter: time.Millisecond, Err: fmt.Errorf("rate limited")}
		}
		return &llm.Response{Text: "hello", Model: "example:primary"}, nil
	})
	limiter := resilient.NewLimiter(600, 100_000) // shared by every model of the process
	model := resilient.Retry(resilient.RateLimit(flaky, limiter), resilient.WithDelays(time.Millisecond, 10*time.Millisecond, 2))

	resp, err := model.Request(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.UserPrompt{Text: "hi"}}}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Text, resp.Model, resp.Attempts)

	refused := llm.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
		return nil, &llm.ModelError{Provider: "example", Model: "primary", StatusCode: 400, Err: fmt.Errorf("bad request")}
	})
	fb := resilient.Fallback(resilient.Retry(refused), llm.AlwaysText("from the fallback"))
	resp, err = fb.Request(ctx, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.UserPrompt{Text: "hi"}}}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Text, resp.Model)
	fmt.Println(llm.NameOf(fb))
	// Output:
	// hello example:primary 3
	// from the fallback scripted
	// fallback(func,scripted)
}
