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
