package call

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zenmcp/zen/services/platform/tokens"
)

func TestCapOutputFitsTheBudgetAndSaysWhereTheRestIs(t *testing.T) {
	long := strings.Repeat("é réponse longue ", 3000) // ~54 KB, two-byte runes
	payload := map[string]any{"status": "success", "content": long, "metadata": map[string]any{"tool_name": "chat"}}
	capOutput(payload, 2000, "t-1")
	raw, _ := json.Marshal(payload)
	content := payload["content"].(string)
	if got := tokens.Estimate(string(raw)); got > 2000 {
		t.Errorf("capped result is ~%d tokens, over 2000", got)
	}
	if !utf8.ValidString(content) || !strings.Contains(content, "zen://threads/t-1") {
		t.Errorf("content tail = %q", content[len(content)-200:])
	}
	meta := payload["metadata"].(map[string]any)
	if meta["output_truncated"] != true || meta["full_content_chars"] != len(long) {
		t.Errorf("metadata = %v", meta)
	}

	short := map[string]any{"status": "success", "content": "brief", "metadata": map[string]any{}}
	capOutput(short, 2000, "t-1")
	if short["content"] != "brief" || short["metadata"].(map[string]any)["output_truncated"] != nil {
		t.Errorf("a short result changed: %v", short)
	}
}
