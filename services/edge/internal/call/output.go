package call

import (
	"fmt"

	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/tokens"
)

// DefaultOutputTokens is Claude Code's default MAX_MCP_OUTPUT_TOKENS.
const DefaultOutputTokens = 25_000

// capOutput keeps a result's JSON within the client's output budget by
// shortening its content, and says where the whole answer is: the thread
// keeps it, so zen://threads/{id} or GET /v1/threads/{id} returns it. It
// returns the JSON it measured, which is what the client reads, or nil
// when the reply does not encode.
func capOutput(out *reply.Reply, maxTokens int, threadID string) []byte {
	if maxTokens <= 0 {
		maxTokens = DefaultOutputTokens
	}
	content := out.Content
	raw, err := out.MarshalJSON()
	if err != nil || tokens.EstimateBytes(int64(len(raw))) <= int64(maxTokens) {
		return raw
	}
	// Keep 10% of the budget for the envelope and the notice.
	over := tokens.EstimateBytes(int64(len(raw))) - int64(maxTokens)*9/10
	keep := len(content) - int(float64(over)*3.3)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && keep < len(content) && content[keep]&0xC0 == 0x80 {
		keep-- // never cut a UTF-8 character in half
	}
	where := "the full answer was not saved (no continuation was stored)"
	if threadID != "" {
		where = fmt.Sprintf("the full answer is in the conversation: read the MCP resource zen://threads/%s, or GET /v1/threads/%s on the gateway", threadID, threadID)
	}
	out.Content = content[:keep] + fmt.Sprintf("\n\n[zen: this answer was cut to fit the client's limit of %d tokens "+
		"(MAX_MCP_OUTPUT_TOKENS); %s]", maxTokens, where)
	out.Metadata.OutputTruncated, out.Metadata.FullContentChars = true, len(content)
	raw, _ = out.MarshalJSON() // encodes, as before the cut: only strings and numbers changed
	return raw
}
