package actors

import "errors"

// Failure kinds recorded in run.failed (events.ErrorInfo.Kind).
const (
	FailToolRetryLimit   = "tool_retry_limit_exceeded"
	FailNoTools          = "no_tools"
	FailUsageLimit       = "usage_limit_exceeded"
	FailModel            = "model_error"
	FailInvalidResponse  = "invalid_response"
	FailToolset          = "toolset_error"
	FailOutputRetryLimit = "output_retry_limit_exceeded"
	FailInternal         = "internal"
)

// errRunCancelled is the cause a run's context is cancelled with.
var errRunCancelled = errors.New("run cancelled")
