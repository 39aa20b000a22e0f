package memory

import (
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/tokens"
)

// A turn without a stored count (imported, or counted for another
// encoding) is estimated, not tokenized in every selection that reads it:
// at a few megabytes a second, 30 MB of imported text cost each continued
// call 1.35 s.
func TestTurnsWithoutACountAreEstimated(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("a longer prose sentence, ", 200)
	if tokens.Count(tokens.O200k, text) == tokens.Estimate(text) {
		t.Fatal("the text counts as it is estimated: pick another")
	}
	for _, encoding := range []string{tokens.O200k, tokens.EstimateEncoding} {
		if got, want := tokensOf(nil, encoding, text), tokens.Estimate(text); got != want {
			t.Errorf("%s, no count stored: %d tokens, want the estimate, %d", encoding, got, want)
		}
	}
	if got := tokensOf(map[string]int64{tokens.O200k: 7}, tokens.O200k, text); got != 7 {
		t.Errorf("a stored count: %d tokens, want 7", got)
	}
}
