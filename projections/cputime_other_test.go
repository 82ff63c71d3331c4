//go:build !unix

package projections_test

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
