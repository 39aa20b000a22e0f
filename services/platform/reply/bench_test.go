package reply

import (
	"strings"
	"testing"
)

// BenchmarkEdgeReply is the edge's work on a chat answer: decode what the
// executor sent, add a transport fact, encode what the client reads.
//
//	go test -run '^$' -bench EdgeReply -benchtime 2000x ./services/platform/reply
func BenchmarkEdgeReply(b *testing.B) {
	raw := (&Reply{Status: StatusSuccess, Content: strings.Repeat("The answer, with <code> & \"quotes\".\n", 100),
		ContentType: Text, Metadata: Metadata{ToolName: "chat", ModelUsed: "gpt-5", ProviderUsed: "openai",
			Fields: map[string]any{"conversation_ready": true, "usage": map[string]any{"input_tokens": 1200,
				"output_tokens": 300, "total_tokens": 1500}}}}).Encode()
	b.ReportAllocs()
	for b.Loop() {
		r, err := Decode(raw)
		if err != nil {
			b.Fatal(err)
		}
		r.Metadata.TraceID = "0af7651916cd43dd8448eb211c80319c"
		_ = r.Encode()
	}
}
