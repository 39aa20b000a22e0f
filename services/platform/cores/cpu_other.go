//go:build !unix

package cores

import "time"

// processCPU is unknown here: only overlapping calls widen.
func processCPU() (time.Duration, bool) { return 0, false }
