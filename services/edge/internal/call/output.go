package call

import (
	"fmt"
	"sort"

	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/storedjson"
	"github.com/zenmcp/zen/services/platform/tokens"
)

// DefaultOutputTokens is Claude Code's default MAX_MCP_OUTPUT_TOKENS.
const DefaultOutputTokens = 25_000

// capOutput keeps a result's JSON within the client's output budget by
// shortening its longest strings, the content and the tool's own fields
// alike (a workflow step's answer is in its fields: a consensus's answers,
// an investigation's summary), to one length, each then saying where the
// whole answer is: the thread keeps it, so zen://threads/{id} or
// GET /v1/threads/{id} returns it. It returns the JSON it measured, which
// is what the client reads, or nil when the reply does not encode.
func capOutput(out *reply.Reply, maxTokens int, threadID string) []byte {
	if maxTokens <= 0 {
		maxTokens = DefaultOutputTokens
	}
	raw, err := out.MarshalJSON()
	if err != nil || tokens.EstimateBytes(int64(len(raw))) <= int64(maxTokens) {
		return raw
	}
	where := "the full answer was not saved (no continuation was stored)"
	if threadID != "" {
		kept := "the full answer is"
		if len(out.Content) > storedjson.MaxTurnBytes { // fitTurns kept its start
			kept = fmt.Sprintf("the answer's first %d MiB are", storedjson.MaxTurnBytes>>20)
		}
		where = fmt.Sprintf("%s in the conversation: read the MCP resource zen://threads/%s, or GET /v1/threads/%s "+
			"on the gateway", kept, threadID, threadID)
	}
	note := fmt.Sprintf("[zen: this answer was cut to fit the client's limit of %d tokens (MAX_MCP_OUTPUT_TOKENS); %s]",
		maxTokens, where)
	content := len(out.Content)
	strs := []leaf{{s: out.Content, sep: "\n\n", set: func(s string) { out.Content = s }}}
	stringsIn(out.Fields, &strs)
	for i := range strs {
		strs[i].json = reply.JSONLen(strs[i].s)
	}
	// Each string is weighed as the reply's JSON writes it (code escapes
	// many of its bytes), and keeps 10% of the budget for the envelope.
	over := len(raw) - int(tokens.BytesWithin(int64(maxTokens)*9/10))
	longest := lengthToCut(strs, over, reply.JSONLen(note))
	cut := false
	for _, l := range strs {
		if l.json > longest+reply.JSONLen(l.sep+note) {
			l.set(reply.PrefixWithin(l.s, longest) + l.sep + note)
			cut = true
		}
	}
	if !cut {
		return raw // nothing to cut: the reply goes as it is
	}
	out.Metadata.OutputTruncated = true
	if len(out.Content) < content {
		out.Metadata.FullContentChars = content
	}
	raw, _ = out.MarshalJSON() // encodes, as before the cut: only strings and numbers changed
	return raw
}

// leaf is a string within a reply, its length as JSON, what comes before
// a note put after its start, and how to replace it.
type leaf struct {
	s, sep string
	json   int
	set    func(string)
}

// stringsIn collects the strings within v, a decoded JSON value.
func stringsIn(v any, out *[]leaf) {
	each := func(x any, set func(string)) {
		if s, ok := x.(string); ok {
			*out = append(*out, leaf{s: s, sep: " ", set: set})
			return
		}
		stringsIn(x, out)
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			each(x, func(s string) { v[k] = s })
		}
	case []any:
		for i, x := range v {
			each(x, func(s string) { v[i] = s })
		}
	}
}

// lengthToCut is the greatest length (as JSON) that cutting every string
// longer to, and noting the cut (note more bytes, with the string's
// separator), saves at least want bytes; 0 when none does: then every
// string that a note makes shorter is cut to it.
func lengthToCut(strs []leaf, want, note int) int {
	saved := func(n int) int {
		total := 0
		for _, l := range strs {
			total += max(0, l.json-n-note-reply.JSONLen(l.sep))
		}
		return total
	}
	// saved falls as n grows: the greatest n that still saves enough.
	return max(0, sort.Search(maxLen(strs)+1, func(n int) bool { return saved(n) < want })-1)
}

func maxLen(strs []leaf) int {
	n := 0
	for _, l := range strs {
		n = max(n, l.json)
	}
	return n
}
