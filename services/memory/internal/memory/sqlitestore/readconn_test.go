package sqlitestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// readSyscalls is how many read system calls this process has made
// (/proc/self/io), the reading of that file included.
func readSyscalls(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io to count reads with: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		var n int
		if _, err := fmt.Sscanf(line, "syscr: %d", &n); err == nil {
			return n
		}
	}
	t.Fatalf("no syscr in /proc/self/io:\n%s", b)
	return 0
}

// appendedThread is a thread of 20 exchanges, the last appended just now.
func appendedThread(t *testing.T, s *Store) *memory.Thread {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	th := chatThread(now)
	th.InitialContext = map[string]any{"prompt": "review the parser"}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		turns := []memory.Turn{{Role: memory.RoleUser, Content: fmt.Sprint("q", i)},
			{Role: memory.RoleAssistant, Content: fmt.Sprint("a", i)}}
		if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: uuid.NewString()}, turns, 100, now,
			now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	return th
}

// A read that follows an append, as a continued call's does, takes no page
// from the file: with no write under way it runs on the writer's
// connection, whose cache holds what the append wrote. (A reader's cache
// is dropped by every write of another connection: nine reads a Get.)
// Not parallel: it counts the process's reads.
func TestAReadAfterAnAppendReadsNoPageFromTheFile(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	th := appendedThread(t, s)
	counting := -readSyscalls(t) + readSyscalls(t) // what counting itself adds
	before := readSyscalls(t)
	got, err := s.Get(context.Background(), th.ID, time.Now())
	after := readSyscalls(t)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Turns) != 40 {
		t.Fatalf("read %d turns, want 40", len(got.Turns))
	}
	if n := after - before - counting; n > 0 {
		t.Errorf("the read after an append made %d read system calls, want none", n)
	}
}

// While a write holds the writer's connection, reads go to the readers and
// see what the store committed.
func TestReadsDoNotWaitForAWrite(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	th := appendedThread(t, s)
	s.writer <- struct{}{} // a write under way
	defer func() { <-s.writer }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := s.Get(ctx, th.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, turn := range got.Turns[len(got.Turns)-2:] {
		contents = append(contents, turn.Content)
	}
	if diff := cmp.Diff([]string{"q19", "a19"}, contents); diff != "" {
		t.Errorf("the last exchange (-want +got):\n%s", diff)
	}
}
