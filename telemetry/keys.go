package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// The attribute keys of the GenAI and MCP semantic conventions, from the
// semconv package of spec version 1.41.0, the last one that has them;
// weft's own keys are under weft.*.
var (
	keyOperation     = semconv.GenAIOperationNameKey
	keyProvider      = semconv.GenAIProviderNameKey
	keyRequestModel  = semconv.GenAIRequestModelKey
	keyResponseModel = semconv.GenAIResponseModelKey
	keyFinish        = semconv.GenAIResponseFinishReasonsKey
	keyInputTokens   = semconv.GenAIUsageInputTokensKey
	keyOutputTokens  = semconv.GenAIUsageOutputTokensKey
	keyTokenType     = semconv.GenAITokenTypeKey
	keyAgentName     = semconv.GenAIAgentNameKey
	keyConversation  = semconv.GenAIConversationIDKey
	keyToolName      = semconv.GenAIToolNameKey
	keyToolCallID    = semconv.GenAIToolCallIDKey
	keyToolType      = semconv.GenAIToolTypeKey
	keyToolArgs      = semconv.GenAIToolCallArgumentsKey
	keyToolResult    = semconv.GenAIToolCallResultKey
	keyErrorType     = semconv.ErrorTypeKey

	keyRunID      = attribute.Key("weft.run.id")
	keyRunStatus  = attribute.Key("weft.run.status")
	keySegment    = attribute.Key("weft.run.segment")
	keyAttempt    = attribute.Key("weft.tool.attempt")
	keyToolKind   = attribute.Key("weft.tool.kind")
	keyOutcome    = attribute.Key("weft.outcome")
	keyHITLKind   = attribute.Key("weft.hitl.kind")
	keyBackend    = attribute.Key("weft.store.backend")
	keyRedelivery = attribute.Key("weft.redelivery")
	keyNode       = attribute.Key("weft.node")
)

// The GenAI operation names weft records.
const (
	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"
)

// MetadataKey is the run.started metadata key of a run's trace context:
// {"traceparent": "00-…"} when the start had a caller's span, else
// {"trace_id": "…"} (the run's own root trace).
const MetadataKey = "weft.trace"
