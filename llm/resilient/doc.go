// Package resilient makes models resilient, as llm.Model wrappers that
// compose: Retry sends a request again after a retryable failure (a rate
// limit, an overload, a server or connection error) with exponential
// backoff and jitter, honouring the provider's Retry-After; Fallback asks
// the next model of a list when one fails; RateLimit waits for a Limiter,
// a client-side budget of requests and tokens per minute shared by every
// model wrapped with it in the process.
//
// They compose from the inside out, the limiter closest to the provider so
// that every attempt counts, a retry per model, and the list outermost:
//
//	shared := resilient.NewLimiter(500, 200_000) // one per provider account, for the whole process
//	model := resilient.Fallback(
//		resilient.Retry(resilient.RateLimit(primary, shared)),
//		resilient.Retry(secondary, resilient.WithMaxAttempts(2)),
//	)
//
// Each wrapper implements llm.Model, llm.Streamer and llm.Named. Retry and
// RateLimit name themselves as the model they wrap; Fallback names itself
// "fallback(a,b)". An answer's Response.Model names the model that
// answered and its Attempts how many times the request was sent to it, so
// the runtime's model.response event records both.
//
// A stream is retried, or handed to the next model, only when it failed
// before yielding any event to its consumer; once the consumer saw part
// of an answer, an error is passed on to it.
//
// The package is a leaf beside llm: it imports llm and the backoff and
// rate libraries, never the runtime. Its errors are *llm.ModelError values
// whose causes are typed (*ExhaustedError, *FallbackError,
// *TooLargeError); their texts hold the models' own errors and counts,
// never a request's content.
package resilient
