package memory

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/tokens"
)

// A turn without a stored count (imported, or counted for another
// encoding) is never charged less than it takes, and is not tokenized
// whole in every selection that reads it: at a few megabytes a second,
// 30 MB of imported text cost each continued call 1.35 s, and the
// estimate charges hex text at half of what it takes.
func TestTurnsWithoutACountAreNeverUndercounted(t *testing.T) {
	t.Parallel()
	random := make([]byte, 15_000)
	_, _ = rand.Read(random)
	long := hex.EncodeToString(random) // 30 KB, past countOnRead
	if tokens.Estimate(long) >= tokens.Count(tokens.O200k, long) {
		t.Fatal("the estimate does not undercount this text: pick another")
	}
	if got, want := tokensOf(nil, tokens.O200k, long), int64(len(long)); got != want {
		t.Errorf("a long text without a count: %d tokens, want its bytes, %d", got, want)
	}
	short := hex.EncodeToString(random[:2000]) // 4 KB, within it: counted
	if got, want := tokensOf(nil, tokens.O200k, short), tokens.Count(tokens.O200k, short); got != want {
		t.Errorf("a short text without a count: %d tokens, want its count, %d", got, want)
	}
	prose := strings.Repeat("a longer prose sentence, ", 200)
	if got, want := tokensOf(nil, tokens.EstimateEncoding, prose), tokens.Estimate(prose); got != want {
		t.Errorf("for an estimating model: %d tokens, want the estimate, %d", got, want)
	}
	if got := tokensOf(map[string]int64{tokens.O200k: 7}, tokens.O200k, prose); got != 7 {
		t.Errorf("a stored count: %d tokens, want 7", got)
	}
}
