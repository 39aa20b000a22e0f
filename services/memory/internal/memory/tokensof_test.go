package memory

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/tokens"
)

// A text without a stored count (imported, or counted for another
// encoding) is counted within what one selection may count, and past it
// charged a token a byte, never less than it takes: counting every such
// turn in every selection cost a continued call 136 ms for 150 turns of
// 8 KiB, and the estimate charges hex text at half of what it takes.
func TestTextsWithoutACountAreCountedWithinABudget(t *testing.T) {
	t.Parallel()
	random := make([]byte, 20_000)
	_, _ = rand.Read(random)
	first := hex.EncodeToString(random) // 40 KB: counted
	if tokens.Estimate(first) >= tokens.Count(tokens.O200k, first) {
		t.Fatal("the estimate does not undercount this text: pick another")
	}
	charge := newCounter(tokens.O200k)
	if got, want := charge.tokens(nil, first), tokens.Count(tokens.O200k, first); got != want {
		t.Errorf("a text within the budget: %d tokens, want its count, %d", got, want)
	}
	second := hex.EncodeToString(random[:15_000]) // 30 KB more: past the 64 KiB counted in all
	if got, want := charge.tokens(nil, second), int64(len(second)); got != want {
		t.Errorf("a text past the budget: %d tokens, want its bytes, %d", got, want)
	}
	if got := charge.tokens(map[string]int64{tokens.O200k: 7}, second); got != 7 {
		t.Errorf("a stored count: %d tokens, want 7", got)
	}
	prose := strings.Repeat("a longer prose sentence, ", 200)
	if got, want := newCounter(tokens.EstimateEncoding).tokens(nil, prose), tokens.Estimate(prose); got != want {
		t.Errorf("for an estimating model: %d tokens, want the estimate, %d", got, want)
	}
}
