// Package anthropic is weft's adapter for Anthropic's Messages API, on the
// official Go SDK (github.com/anthropics/anthropic-sdk-go/v2, API version
// 2026-10-21). A *Model implements llm.Model (Request: one non-streamed
// request), llm.Streamer (Stream: server-sent events) and llm.Named
// ("anthropic:<model id>", which every Response.Model carries too).
//
//	m, err := anthropic.New("claude-sonnet-4-5") // key from ANTHROPIC_API_KEY
//	resp, err := llm.Collect(llm.Stream(ctx, m, req))
//
// # Configuration
//
// The API key comes from WithAPIKey or ANTHROPIC_API_KEY, the base URL from
// WithBaseURL or ANTHROPIC_BASE_URL; nothing else of the environment (the
// SDK's auth token, profiles, custom headers) is read. The SDK's retries
// are off: wrap the model in llm/resilient for retries, fallbacks and rate
// limits.
//
// # Requests
//
//   - Request.Instructions, then the Instructions parts of system messages
//     in order, are the system prompt.
//   - User and assistant messages keep their order. Consecutive messages of
//     one role become one turn, as the API requires, and in a user turn the
//     tool_result blocks come first. UserPrompt and Text parts are text
//     blocks (empty ones are left out: the API rejects them), ToolCall parts
//     tool_use blocks (the id, the name, the arguments as input; arguments
//     that are not a JSON object are replayed as {}), ToolReturn parts
//     tool_result blocks with the model-facing content only (a JSON string
//     as its text, other JSON as its text form) and is_error for a failed
//     call, and RetryPrompt parts tool_result blocks with is_error and the
//     retry message (a retry prompt about no call is a text block).
//   - Tools are sent with their name, description and parameters as
//     input_schema, verbatim (a tool without parameters gets an empty object
//     schema). Metadata is not sent.
//   - A strict tool is sent with strict: true and its schema converted to
//     what strict mode accepts: every object closed with
//     additionalProperties: false, oneOf as anyOf, and the keywords strict
//     mode cannot enforce (minimum, maximum, multipleOf, minLength,
//     maxLength, maxItems, minItems above 1, other formats than date-time,
//     time, date, duration, email, hostname, uri, ipv4, ipv6 and uuid)
//     moved into the description as {keyword: value}, for the model to read;
//     the runtime still validates arguments against the original schema.
//     A schema with no strict form fails the request with ErrStrictSchema
//     before anything is sent: an object with additionalProperties true or
//     a schema, a tuple items list, oneOf beside anyOf, a recursive schema.
//   - Settings: MaxTokens is max_tokens (the API requires one: when it is 0,
//     WithMaxTokens's value, by default DefaultMaxTokens = 8192);
//     StopSequences is stop_sequences; every Provider key is set in the
//     request body as it is (after the fields above, so it replaces one of
//     the same name; a key the API does not know gets a 400 from it).
//     Temperature, TopP and Seed fail the request with
//     ErrUnsupportedSetting: the API version the SDK speaks rejects
//     temperature and top_p even at their defaults, and the API has no seed.
//     WithIgnoreUnsupportedSettings drops them instead.
//
// # Responses
//
// Text blocks, concatenated, are the Text; tool_use blocks, in order, the
// ToolCalls. Thinking and server-tool blocks are not kept. Stop reasons:
// end_turn and stop_sequence are FinishStop, tool_use FinishToolCalls,
// max_tokens and model_context_window_exceeded FinishLength, refusal
// FinishContentFilter; others (pause_turn) are kept as they are. Usage:
// input_tokens plus cache_read_input_tokens plus
// cache_creation_input_tokens is InputTokens (llm.Usage counts cached
// tokens in it, the API apart from it), the cache counts are
// CacheReadTokens and CacheWriteTokens.
//
// # Errors
//
// Every failure is a *llm.ModelError with Provider "anthropic" and the
// model id. An API error has the HTTP status (0 for an error event in a
// stream that had started), the API's error type (rate_limit_error,
// overloaded_error, …) and code, the API's message inside ErrAPI, and
// RetryAfter from the Retry-After header. Retryable: 408, 429, 5xx and
// 529, the retryable types in a stream, lost connections, malformed and
// cut streams; not 400, 401, 403, 404, an ended context or a request
// refused before sending. The error never holds the SDK's error (which
// holds the request), and its text has the API key and header values
// redacted.
package anthropic
