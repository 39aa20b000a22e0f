package render

import (
	"fmt"
	"strings"
	"time"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
)

// NumberLines prefixes each line with its number, right-aligned to at least
// four columns, so a model can cite lines exactly.
func NumberLines(content string) string {
	content = strings.ReplaceAll(strings.ReplaceAll(content, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	width := max(4, len(fmt.Sprint(len(lines))))
	var b strings.Builder
	b.Grow(len(content) + len(lines)*(width+4))
	for i, line := range lines {
		fmt.Fprintf(&b, "%*d│ %s\n", width, i+1, line)
	}
	return b.String()
}

// File embeds one file between BEGIN and END markers.
func File(f *executorv1.FileContent) string {
	modified := f.GetModifiedAt()
	if t, err := time.Parse(time.RFC3339Nano, modified); err == nil {
		modified = t.UTC().Format("2006-01-02 15:04:05") + " UTC"
	}
	return fmt.Sprintf("--- BEGIN FILE: %s (Last modified: %s) ---\n%s--- END FILE: %s ---\n",
		f.GetPath(), modified, NumberLines(f.GetContent()), f.GetPath())
}

// Skipped says which files the call named were left out, and why: one line
// each, where the files would have been.
func Skipped(skipped []*executorv1.SkippedFile) string {
	var b strings.Builder
	for _, s := range skipped {
		fmt.Fprintf(&b, "--- FILE SKIPPED: %s (%s) ---\n", s.GetPath(), s.GetReason())
	}
	return b.String()
}

// Files embeds several files, one after another.
func Files(files []*executorv1.FileContent) string {
	var b strings.Builder
	b.Grow(FilesSize(files))
	for i, f := range files {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(File(f))
	}
	return b.String()
}

// FilesSize is about what Files writes: the contents and paths, and room
// for each file's header.
func FilesSize(files []*executorv1.FileContent) int {
	n := 0
	for _, f := range files {
		n += len(f.GetContent()) + len(f.GetPath()) + 256
	}
	return n
}
