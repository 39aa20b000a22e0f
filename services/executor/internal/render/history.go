package render

import (
	"fmt"
	"strconv"
	"strings"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
)

// History renders the block that opens a continued call: the thread, the
// files it used (each once, as last shared) and its turns in order. current
// are the call's own files: one the history holds with other contents has
// changed since it was shared, and a note stands in for its old contents,
// so the model reads the file once, as it is now, with the new request.
func History(c *executorv1.Conversation, current []*executorv1.FileContent) string {
	var b strings.Builder
	b.Grow(HistorySize(c))
	WriteHistory(&b, c, current)
	return b.String()
}

// WriteHistory writes what History returns to b, for a prompt that holds
// it among other parts: the history is most of a continued call's prompt.
func WriteHistory(b *strings.Builder, c *executorv1.Conversation, current []*executorv1.FileContent) {
	// Turns so far, then "This is turn N+1" at the end: one count, never
	// a header that reads as the turn the new input is.
	fmt.Fprintf(b, "=== CONVERSATION HISTORY (CONTINUATION) ===\nThread: %s\nTool: %s\n"+
		"Turns so far: %d of at most %d\n", c.GetThreadId(), c.GetToolName(), c.GetTotalTurns(), c.GetMaxTurns())
	b.WriteString("You are continuing this conversation thread from where it left off.\n\n")

	if len(c.GetFiles()) > 0 || c.GetOmittedFiles() > 0 {
		b.WriteString("=== FILES REFERENCED IN THIS CONVERSATION ===\n")
		b.WriteString("These files were shared earlier in the conversation; each appears once, as it was last shared.\n")
		if n := c.GetOmittedFiles(); n > 0 {
			fmt.Fprintf(b, "[NOTE: %d older file(s) left out to fit the context budget]\n", n)
		}
		b.WriteString("Refer to them for the turns below and for the new request.\n\n")
		b.WriteString(historyFiles(c.GetFiles(), current))
		b.WriteString("=== END REFERENCED FILES ===\n\n")
	}

	b.WriteString("Previous conversation turns:\n")
	first := int(c.GetOmittedTurns()) + 1
	for i, t := range c.GetTurns() {
		b.WriteString("\n--- Turn ")
		b.WriteString(strconv.Itoa(first + i))
		b.WriteString(" (")
		writeTurnLabel(b, t)
		b.WriteString(") ---\n")
		if files := t.GetFiles(); len(files) > 0 {
			paths := make([]string, len(files))
			for j, f := range files {
				paths[j] = f.GetPath()
			}
			fmt.Fprintf(b, "Files used in this turn: %s\n\n", strings.Join(paths, ", "))
		}
		b.WriteString(t.GetContent())
		b.WriteString("\n")
	}
	if c.GetOmittedTurns() > 0 {
		fmt.Fprintf(b, "\n[Note: Showing %d most recent turns out of %d total]\n", len(c.GetTurns()), c.GetTotalTurns())
	}
	b.WriteString("\n=== END CONVERSATION HISTORY ===\n")
	b.WriteString("IMPORTANT: You are continuing an existing conversation. Build on what was said above; do not repeat or summarise earlier answers, and keep to the decisions already made unless the new input changes them.\n")
	fmt.Fprintf(b, "This is turn %d of the conversation - use the history above to answer the new input below.\n",
		c.GetTotalTurns()+1)
}

// historyFiles embeds the history's files, with a note in place of each
// that current holds with other contents.
func historyFiles(files, current []*executorv1.FileContent) string {
	now := make(map[string]string, len(current))
	for _, f := range current {
		now[f.GetPath()] = f.GetSha256()
	}
	var b strings.Builder
	for i, f := range files {
		if i > 0 {
			b.WriteString("\n")
		}
		if sum, ok := now[f.GetPath()]; ok && sum != f.GetSha256() {
			fmt.Fprintf(&b, "--- FILE CHANGED: %s has changed since it was shared; its current version comes with "+
				"the new request below, and earlier turns refer to the version before ---\n", f.GetPath())
			continue
		}
		b.WriteString(File(f))
	}
	return b.String()
}

// HistorySize is about what History writes, so its builder grows once:
// the turns' contents and labels, the files, and room for the headers.
func HistorySize(c *executorv1.Conversation) int {
	n := 1024
	for _, t := range c.GetTurns() {
		n += len(t.GetContent()) + len(t.GetModelName()) + len(t.GetToolName()) + len(t.GetModelProvider()) + 64
		for _, f := range t.GetFiles() {
			n += len(f.GetPath()) + 2
		}
	}
	return n + FilesSize(c.GetFiles())
}

// writeTurnLabel names who spoke: the agent for user turns, the model
// (with the tool and provider) for assistant turns.
func writeTurnLabel(b *strings.Builder, t *memoryv1.Turn) {
	switch {
	case t.GetRole() == memoryv1.Role_ROLE_USER:
		b.WriteString("Agent")
	case t.GetModelName() != "":
		b.WriteString(t.GetModelName())
	default:
		b.WriteString("Assistant")
	}
	if t.GetToolName() != "" {
		b.WriteString(" using ")
		b.WriteString(t.GetToolName())
	}
	if t.GetRole() == memoryv1.Role_ROLE_ASSISTANT && t.GetModelProvider() != "" {
		b.WriteString(" via ")
		b.WriteString(t.GetModelProvider())
	}
}

// Turns renders turns on their own, labelled as in History, for prompts
// that show part of a conversation.
func Turns(turns []*memoryv1.Turn) string {
	var b strings.Builder
	for _, t := range turns {
		b.WriteString("\n--- ")
		writeTurnLabel(&b, t)
		b.WriteString(" ---\n")
		b.WriteString(t.GetContent())
		b.WriteString("\n")
	}
	return b.String()
}
