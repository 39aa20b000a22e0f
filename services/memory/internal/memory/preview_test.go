package memory_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

func TestPreviewCutsToItsRunes(t *testing.T) {
	t.Parallel()
	exactly := strings.Repeat("é", memory.PreviewRunes)
	got := map[string]string{
		"short":                 memory.Preview("fix the parser"),
		"exactly the runes":     memory.Preview(exactly),
		"one rune more":         memory.Preview(exactly + "x"),
		"bytes past, runes not": memory.Preview(strings.Repeat("日", memory.PreviewRunes)),
		"long ASCII":            memory.Preview(strings.Repeat("a", 5000)),
	}
	want := map[string]string{
		"short":                 "fix the parser",
		"exactly the runes":     exactly,
		"one rune more":         exactly + "…",
		"bytes past, runes not": strings.Repeat("日", memory.PreviewRunes),
		"long ASCII":            strings.Repeat("a", memory.PreviewRunes) + "…",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("previews (-want +got):\n%s", diff)
	}
}
