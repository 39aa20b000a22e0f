package tools

import (
	"fmt"
	"strings"
	"testing"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
)

// BenchmarkChatUserMessage builds the prompt of a chat call that continues
// a 50-turn thread, the call path's benchmark thread (cmd/zen's
// BenchmarkContinuedChat).
func BenchmarkChatUserMessage(b *testing.B) {
	turns := make([]*memoryv1.Turn, 50)
	for i := range turns {
		t := &memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: fmt.Sprintf("question %d: %s", i,
			strings.Repeat("why ", 8)), ToolName: "chat"}
		if i%2 == 1 {
			t = &memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "fake reply", ToolName: "chat",
				ModelName: "gpt-5", ModelProvider: "openai"}
		}
		turns[i] = t
	}
	c := &Call{RemainingTurns: 48, Conversation: &executorv1.Conversation{ThreadId: "t", ToolName: "chat",
		Turns: turns, TotalTurns: 50, MaxTurns: 100}}
	b.ReportAllocs()
	for b.Loop() {
		if chatUserMessage("and now?", c) == "" {
			b.Fatal("no prompt")
		}
	}
}
