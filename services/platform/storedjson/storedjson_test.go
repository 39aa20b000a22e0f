package storedjson

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var number = regexp.MustCompile(`[0-9]+`)

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
		got[k], _, _ = strings.Cut(number.ReplaceAllString(v, "N"), ":") // the reason, not the encoder's words
	}
	past := "nested deeper than N levels or with more than N values"
	want := map[string]string{"a call": "", "too deep": past, "too wide": past,
		"too long": "N bytes as JSON, over the N-byte limit", "just fits": "", "widest": "", "deepest": "",
		"not a JSON": "not JSON"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FitsAThread (-want +got):\n%s", diff)
	}
}

func TestFitsAWorkflowState(t *testing.T) {
	t.Parallel()
	findings := func(n int) map[string]any {
		return map[string]any{"findings": strings.Repeat("<", n-len(`{"findings":""}`))}
	}
	got := map[string]string{
		"at the limit": FitsAWorkflowState(findings(MaxWorkflowStateBytes)),
		"past it":      FitsAWorkflowState(findings(MaxWorkflowStateBytes + 1)),
		"too wide":     FitsAWorkflowState(map[string]any{"files": make([]any, MaxValues)}),
	}
	want := map[string]string{"at the limit": "", "past it": "1048577 bytes as JSON, over the 1048576-byte limit",
		"too wide": "nested deeper than 64 levels or with more than 20000 values"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FitsAWorkflowState (-want +got):\n%s", diff)
	}
}
