package render

import (
	"strings"
	"testing"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
)

func TestNumberLines(t *testing.T) {
	got := NumberLines("a\r\nb\n")
	want := "   1│ a\n   2│ b\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	long := strings.Repeat("x\n", 12345)
	if !strings.HasPrefix(NumberLines(long), "    1│ x") {
		t.Errorf("five-digit files should widen the column: %q", NumberLines(long)[:12])
	}
}

func TestHistoryShowsTurnsInOrderWithLabels(t *testing.T) {
	c := &executorv1.Conversation{
		ThreadId: "t-1", ToolName: "chat", TotalTurns: 4, MaxTurns: 50, OmittedTurns: 2,
		Turns: []*memoryv1.Turn{
			{Role: memoryv1.Role_ROLE_USER, Content: "second question", ToolName: "chat", Files: []*memoryv1.FileRef{{Path: "/src/a.go"}}},
			{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "second answer", ToolName: "chat", ModelName: "llama3.2", ModelProvider: "custom"},
		},
		Files: []*executorv1.FileContent{{Path: "/src/a.go", Content: "package a\n", ModifiedAt: "2026-01-02T03:04:05Z"}},
	}
	got := History(c)
	for _, want := range []string{
		"=== CONVERSATION HISTORY (CONTINUATION) ===\nThread: t-1\nTool: chat\nTurn 4/50\n",
		"--- BEGIN FILE: /src/a.go (Last modified: 2026-01-02 03:04:05 UTC) ---\n   1│ package a\n--- END FILE: /src/a.go ---",
		"--- Turn 3 (Agent using chat) ---\nFiles used in this turn: /src/a.go\n\nsecond question",
		"--- Turn 4 (llama3.2 using chat via custom) ---\nsecond answer",
		"[Note: Showing 2 most recent turns out of 4 total]",
		"This is turn 5 of the conversation",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("history lacks %q\n--- got ---\n%s", want, got)
		}
	}
	if strings.Index(got, "second question") > strings.Index(got, "second answer") {
		t.Error("turns are not in chronological order")
	}
	if strings.Count(got, "package a") != 1 {
		t.Error("a file must be embedded exactly once")
	}
}
