package actors

import "errors"

// errRunCancelled is the cause a run's context is cancelled with.
var errRunCancelled = errors.New("run cancelled")
