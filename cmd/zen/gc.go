package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// gcPercent is the garbage collector's target when GOGC is not set. zen's
// heap is small (tens of MB) and short-lived: each call allocates and
// drops its messages. At Go's default of 100 the collector ran about twice
// a call and took a sixth of zen's CPU under load; at 400 it runs a
// quarter as often for a few tens of MB more.
const gcPercent = 400

// memoryLimitShare is the part of a container's memory limit that zen
// lets its heap grow to before the collector works harder: the limit,
// not gcPercent, then decides, and zen is not killed for a garbage peak.
const memoryLimitShare = 0.75

// tuneGC sets the collector's target for the role args run and a soft
// memory limit, unless GOGC and GOMEMLIMIT say otherwise (Go reads those
// itself).
func tuneGC(getenv func(string) string, args []string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcTarget(command(args)))
	}
	if getenv("GOMEMLIMIT") != "" {
		return
	}
	if limit, ok := cgroupMemoryLimit(); ok {
		debug.SetMemoryLimit(int64(float64(limit) * memoryLimitShare))
	}
}

// gcTarget is the collector's target for role: gcPercent for the roles a
// call passes through, Go's own for a gateway of its own, which is off the
// call's path and holds whole threads as it answers (at gcPercent, five
// times what it held, where no memory limit applies).
func gcTarget(role string) int {
	if role == "gateway" {
		return 100
	}
	return gcPercent
}

// cgroupMemoryLimit reads the memory limit of the cgroup (v2) zen runs
// in; none outside a container or without a limit.
func cgroupMemoryLimit() (int64, bool) {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0, false
	}
	return parseMemoryMax(string(b))
}

func parseMemoryMax(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 { // "max" is no limit
		return 0, false
	}
	return n, true
}
