package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMemoryMax(t *testing.T) {
	t.Parallel()
	type result struct {
		N  int64
		OK bool
	}
	for in, want := range map[string]result{
		"536870912\n": {536870912, true},
		"max\n":       {},
		"":            {},
		"0":           {},
	} {
		n, ok := parseMemoryMax(in)
		if diff := cmp.Diff(want, result{n, ok}); diff != "" {
			t.Errorf("parseMemoryMax(%q) (-want +got):\n%s", in, diff)
		}
	}
}

// A gateway of its own keeps Go's collector target: it holds whole
// threads as it answers, and at 400 its heap grew to five times what it
// held (8 reads of a 60 MB thread, 6.75 GB where 1.4 were live) wherever
// no memory limit applies. Every role that calls carry keeps 400.
func TestAGatewayOfItsOwnCollectsAtGosDefault(t *testing.T) {
	t.Parallel()
	for role, want := range map[string]int{"gateway": 100, "serve": gcPercent, "stdio": gcPercent, "edge": gcPercent,
		"memory": gcPercent, "router": gcPercent, "executor": gcPercent, "": gcPercent} {
		if got := gcTarget(role); got != want {
			t.Errorf("gcTarget(%q) = %d, want %d", role, got, want)
		}
	}
}
