package storedjson

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFitsAThread(t *testing.T) {
	t.Parallel()
	nested := map[string]any{}
	deep := nested
	for range MaxNesting {
		next := map[string]any{}
		deep["n"] = next
		deep = next
	}
	wide := make([]any, MaxValues)
	for i := range wide {
		wide[i] = "/src/a.go"
	}
	// The args map and its list are two of the values, and args and
	// deepest two of the levels: these just fit.
	deepest := map[string]any{}
	for d, left := deepest, MaxNesting-2; left > 0; left-- {
		next := map[string]any{}
		d["n"] = next
		d = next
	}
	got := map[string]string{
		"a call":     FitsAThread(map[string]any{"prompt": "fix <this> & that", "absolute_file_paths": []any{"/a"}}),
		"too deep":   FitsAThread(map[string]any{"n": nested}),
		"too wide":   FitsAThread(map[string]any{"absolute_file_paths": wide}),
		"too long":   FitsAThread(map[string]any{"prompt": strings.Repeat("<", MaxContextBytes)}),
		"just fits":  FitsAThread(map[string]any{"p": strings.Repeat("<", MaxContextBytes-len(`{"p":""}`))}),
		"widest":     FitsAThread(map[string]any{"absolute_file_paths": wide[:MaxValues-2]}),
		"deepest":    FitsAThread(map[string]any{"n": deepest}),
		"not a JSON": FitsAThread(map[string]any{"c": make(chan int)}),
	}
	for k, v := range got {
		if i := strings.IndexAny(v, ":0123456789"); i > 0 {
			got[k] = v[:i] // the reason's words, not its numbers
		}
	}
	want := map[string]string{"a call": "", "too deep": "they nest deeper than ",
		"too wide": "they nest deeper than ", "too long": "they are ", "just fits": "", "widest": "", "deepest": "", "not a JSON": "they are no JSON"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FitsAThread (-want +got):\n%s", diff)
	}
}
