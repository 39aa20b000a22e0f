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
	got := History(c, nil)
	for _, want := range []string{
		"=== CONVERSATION HISTORY (CONTINUATION) ===\nThread: t-1\nTool: chat\nTurns so far: 4 of at most 50\n",
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

// TestHistoryNotesAChangedFile: a file the call brings with other contents
// than the history holds is shown once, by the call; the history says it
// changed instead of showing the old version. An unchanged one stays.
func TestHistoryNotesAChangedFile(t *testing.T) {
	c := &executorv1.Conversation{ThreadId: "t-1", ToolName: "chat", TotalTurns: 2, MaxTurns: 50,
		Files: []*executorv1.FileContent{
			{Path: "/src/a.go", Sha256: "old", Content: "package a // OLD\n"},
			{Path: "/src/b.go", Sha256: "same", Content: "package b // SAME\n"},
		},
	}
	current := []*executorv1.FileContent{
		{Path: "/src/a.go", Sha256: "new", Content: "package a // NEW\n"},
		{Path: "/src/b.go", Sha256: "same", Content: "package b // SAME\n"},
	}
	got := History(c, current)
	if strings.Contains(got, "OLD") || !strings.Contains(got, "SAME") {
		t.Errorf("the history should drop the old a.go and keep b.go:\n%s", got)
	}
	want := "--- FILE CHANGED: /src/a.go has changed since it was shared; its current version comes with the new " +
		"request below, and earlier turns refer to the version before ---\n"
	if !strings.Contains(got, want) {
		t.Errorf("history lacks %q\n--- got ---\n%s", want, got)
	}
}

func TestSkippedIsOneLineEach(t *testing.T) {
	got := Skipped([]*executorv1.SkippedFile{{Path: "/src/gone.go", Reason: "not found"},
		{Path: "/src/big.json", Reason: "too big"}})
	want := "--- FILE SKIPPED: /src/gone.go (not found) ---\n--- FILE SKIPPED: /src/big.json (too big) ---\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
