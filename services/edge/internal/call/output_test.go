package call

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/tokens"
)

func TestCapOutputFitsTheBudgetAndSaysWhereTheRestIs(t *testing.T) {
	long := strings.Repeat("é réponse longue ", 3000) // ~54 KB, two-byte runes
	payload := &reply.Reply{Status: "success", Content: long, Metadata: reply.Metadata{ToolName: "chat"}}
	capOutput(payload, 2000, "t-1")
	raw, _ := json.Marshal(payload)
	content := payload.Content
	if got := tokens.Estimate(string(raw)); got > 2000 {
		t.Errorf("capped result is ~%d tokens, over 2000", got)
	}
	if !utf8.ValidString(content) || !strings.Contains(content, "zen://threads/t-1") {
		t.Errorf("content tail = %q", content[len(content)-200:])
	}
	if meta := payload.Metadata; !meta.OutputTruncated || meta.FullContentChars != len(long) {
		t.Errorf("metadata = %+v", meta)
	}

	short := &reply.Reply{Status: "success", Content: "brief"}
	capOutput(short, 2000, "t-1")
	if short.Content != "brief" || short.Metadata.OutputTruncated {
		t.Errorf("a short result changed: %+v", short)
	}
}
