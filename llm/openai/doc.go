// Package openai is weft's adapter for OpenAI's API and every
// OpenAI-compatible server (Ollama, vLLM, llama.cpp server, LM Studio,
// OpenRouter, Azure OpenAI), on the official SDK
// github.com/openai/openai-go/v3. A *Model implements llm.Model,
// llm.Streamer and llm.Named.
//
//	m, err := openai.New("gpt-4.1-mini")                 // OPENAI_API_KEY
//	m, err := openai.New("llama3", openai.WithBaseURL("http://localhost:11434/v1"),
//		openai.WithProviderName("ollama"))                // no key needed
//
// # Configuration
//
// The API key comes from WithAPIKey or, for OpenAI's own endpoint only,
// from OPENAI_API_KEY: an OpenAI key in the environment is never sent to a
// custom base URL. No other environment variable is read (the SDK's
// OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID, OPENAI_ADMIN_KEY and
// OPENAI_CUSTOM_HEADERS are not consulted), so what a Model does is what
// its options say. OpenAI's endpoint without a key is ErrNoAPIKey from New;
// a custom base URL may go without one.
//
// The model's name, as the event log records it (model.request,
// model.response) and every Response.Model carries it, is
// "<provider>:<model id>": "openai:gpt-4.1-mini" on OpenAI's endpoint,
// "openai-compatible:<id>" on any other base URL, or what
// WithProviderName says ("ollama:llama3").
//
// # Retries
//
// The SDK's own retries are off: every Request or Stream is exactly one
// HTTP request. Retrying, with backoff, Retry-After and a record of each
// attempt, is the job of a wrapper model (llm/resilient) that composes
// with this one; the *llm.ModelError this package returns says whether a
// retry may help and how long the server asked to wait.
//
// # APIs
//
// Chat Completions (POST /chat/completions) is the default, because every
// compatible server speaks it; WithAPI(Responses) chooses POST /responses,
// OpenAI's newer API. What each carries:
//
//	                              ChatCompletions        Responses
//	instructions                  first system message   instructions
//	user / assistant messages     messages               input messages
//	tool calls, parallel, by id   tool_calls             function_call items
//	tool returns, retry prompts   tool messages          function_call_output items
//	tool definitions, strict      tools (function)       tools (function; strict sent either way)
//	temperature, top_p            yes                    yes
//	max tokens                    max_completion_tokens  max_output_tokens
//	                              (OpenAI), max_tokens
//	                              (other servers)
//	stop sequences                stop                   not in the API: ErrUnsupported
//	seed                          seed                   not in the API: ErrUnsupported
//	Settings.Provider extras      top-level body fields  top-level body fields
//	usage, cached input tokens    yes (usage chunk       yes (response.completed)
//	                              when streamed)
//	stored by OpenAI              no (store not sent)    no (store: false)
//	streamed text, call deltas    yes                    yes
//
// Messages map in order. Within one user message, the parts that answer
// tool calls (tool returns, and retry prompts about a call) go first, as
// tool messages, since the API wants a call's answer right after the
// assistant message that made it; its prompts and other retry prompts
// follow as user messages. A tool return carries its model-facing content
// only (llm.ToolReturn.Content, as text: a JSON string as the string, any
// other JSON as JSON); ToolReturn.IsError has no place in either API and
// is not sent (the content says what failed). Arguments of a call without
// any are sent as "{}". A ToolDefinition's Metadata and the Request's Run
// are not sent. The Responses API keeps no state between requests
// (store: false, no previous_response_id): weft sends the whole
// conversation each time, and a reasoning model's reasoning items are
// not carried from one request to the next.
// Settings.Provider keys are sent as top-level fields of the request body
// (e.g. "reasoning_effort", "parallel_tool_calls", "user"), replacing what
// the typed settings set; a key the adapter builds itself (model,
// messages or input, instructions, tools, stream, stream_options, store) is
// ErrUnsupported. Finish reasons map onto llm's: stop, tool_calls (and
// the legacy function_call), length (and the Responses API's
// incomplete/max_output_tokens), content_filter (and a refusal, whose text
// becomes the response's text); an unknown reason is kept as it came.
//
// # Strict mode
//
// A tool whose ToolDefinition.Strict is set is sent with strict: true and
// its schema converted to the dialect strict mode accepts (StrictSchema):
//
//   - every object gets additionalProperties: false and lists all its
//     properties in required; an optional property is made nullable
//     (type [T, "null"], a null added to an enum, or anyOf [S, null]), and
//     a null the model then sends for it is taken out of the call's
//     arguments, so the tool sees the property absent as its own schema
//     says;
//   - oneOf becomes anyOf; an allOf of one schema is merged into its
//     parent;
//   - keywords that only narrow what is valid and strict mode refuses are
//     left out: default, examples, minLength, maxLength, uniqueItems,
//     minProperties, maxProperties, contains, formats other than date-time,
//     time, date, duration, email, hostname, ipv4, ipv6 and uuid, and
//     annotations ($schema, $id, $comment, readOnly, writeOnly, deprecated).
//     The runtime still validates every call's arguments against the
//     tool's full schema.
//
// What strict mode cannot express fails the request before it is sent,
// with a *SchemaError (ErrStrictSchema) naming the tool and the place in
// its schema: an object open to additional properties (a map), an empty
// or untyped schema (any value), not, if/then/else, allOf of several
// schemas, dependentRequired, dependentSchemas, patternProperties,
// unevaluatedProperties, unevaluatedItems, propertyNames, tuples
// (prefixItems, items as a list), a root that is not an object, and a
// $ref that is not to the schema's own $defs. Such a tool can be sent
// without Strict. A tool without Strict is sent with its schema as it is.
// The order of a schema's properties is not kept (they go sorted by name).
//
// # Streaming
//
// Stream yields text deltas and tool-call argument deltas (ToolCallDelta,
// by the call's index among the response's calls; parallel calls may
// interleave) as the server sends them, then one event with the complete
// Response; the arguments in the Response have the strict-mode nulls
// taken out, the deltas are as the model wrote them. Chat Completions
// streams ask for the usage chunk (stream_options.include_usage). A
// stream that fails, carries an error event, has a malformed chunk, or
// ends before the answer finished (a cut connection, a server that stops
// early) yields one *llm.ModelError and no Response. Breaking out of the
// loop or ending ctx closes the connection at once. WithoutStreaming
// makes Stream send an ordinary request, for servers that do not stream
// tool calls; a server that answers a streamed Chat Completions request
// with one JSON answer gives a stream of one event.
//
// # Errors
//
// Every failure is a *llm.ModelError with Provider (the provider name),
// Model (the model id), the HTTP StatusCode, the provider's error Type and
// Code, Retryable and RetryAfter:
//
//   - retryable: 408, 409, 429 (but not a 429 insufficient_quota), 5xx
//     including 503, an error event naming a server error, rate limit or
//     overload, and a refused, reset or cut connection; a server's
//     x-should-retry header, when it sends one, decides instead;
//   - not retryable: 400, 401, 403, 404, 422 and other 4xx, an ended
//     context (the error matches ctx.Err()), a malformed answer
//     (ErrMalformedResponse), a request this package refuses to send
//     (ErrStrictSchema, ErrUnsupported);
//   - RetryAfter is the server's retry-after-ms or Retry-After (seconds
//     or an HTTP date).
//
// Error bodies in other servers' formats ({"error": "text"}, HTML) keep
// their status. The error's text carries the provider's message cut to
// 300 bytes, with the API key, every header value, anything shaped like a
// key and any prompt text of the request it quotes replaced; the SDK's
// error, which holds the HTTP request and its headers, is not kept.
package openai
