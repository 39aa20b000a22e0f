package sqlitestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// readSyscalls is how many read system calls this process has made
// (/proc/self/io), the reading of that file included.
func readSyscalls(t *testing.T) int { return int(procIO(t, "syscr")) }

// procIO is one of this process's I/O counts in /proc/self/io (Linux):
// they count the whole process, so a test that reads them runs alone,
// never beside parallel tests.
func procIO(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io to count reads with: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		var n int64
		if _, err := fmt.Sscanf(line, field+": %d", &n); err == nil {
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/io:\n%s", field, b)
	return 0
}

// appendedThread is a thread of 20 exchanges, read, as a continued call
// reads it, before the last was appended just now.
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
		if i == 19 {
			if _, err := s.Get(ctx, th.ID, now); err != nil {
				t.Fatal(err)
			}
		}
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
	first := readSyscalls(t)
	counting := readSyscalls(t) - first // what counting itself adds
	// The fewest of three calls, each a read after an append: the runtime
	// may read a file of its own meanwhile.
	fewest := -1
	for i := range 3 {
		if i > 0 {
			now := time.Now().UTC()
			turns := qa()
			if _, err := s.Append(context.Background(), th.ID, "", memory.Exchange{ID: uuid.NewString()}, turns, 100,
				now, now.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		before := readSyscalls(t)
		got, err := s.Get(context.Background(), th.ID, time.Now())
		after := readSyscalls(t)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Turns) != 40+2*i {
			t.Fatalf("read %d turns, want %d", len(got.Turns), 40+2*i)
		}
		if n := after - before - counting; fewest < 0 || n < fewest {
			fewest = n
		}
	}
	if fewest > 0 {
		t.Errorf("the read after an append made %d read system calls, want none", fewest)
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

// A read of more than writerTurns turns the process does not hold (the
// first since a restart) reads them on a reader and gives the writer's
// connection back first: with every reader busy it waits for one, and
// writes go through meanwhile.
func TestALongReadLeavesTheWriterFree(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	th := appendedThread(t, open(t, path))
	cold := open(t, path)                 // another process's view: none of the turns held
	other := chatThread(time.Now().UTC()) // appended to while the read waits
	if err := cold.Create(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	for range cap(cold.reads.slots) { // every reader busy: the read must wait
		cold.reads.slots <- struct{}{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // before the store closes (cleanups run last first), should the read still wait
	waiting := &waitsForReader{Context: ctx, writer: cold.writer, held: make(chan bool, 1)}
	type result struct {
		thread *memory.Thread
		err    error
	}
	read := make(chan result, 1)
	go func() {
		got, err := cold.Get(waiting, th.ID, time.Now())
		read <- result{got, err}
	}()
	select {
	case held := <-waiting.held:
		if held {
			t.Fatal("the read waits for a reader holding the writer's connection")
		}
	case r := <-read:
		t.Fatalf("the read of 40 turns did not wait for a reader: %d turns, %v", turnCount(r.thread), r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the read neither waited for a reader nor ended in ten seconds")
	}

	now := time.Now().UTC()
	turns := qa()
	actx, acancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer acancel()
	if _, err := cold.Append(actx, other.ID, "", memory.Exchange{ID: uuid.NewString()}, turns, 100, now,
		now.Add(time.Hour)); err != nil {
		t.Fatalf("an append while the read waits for a reader: %v", err)
	}
	select {
	case r := <-read:
		t.Fatalf("the read ended with every reader busy: %d turns, %v", turnCount(r.thread), r.err)
	default:
	}

	<-cold.reads.slots
	select {
	case r := <-read:
		if r.err != nil || len(r.thread.Turns) != 40 {
			t.Fatalf("the read with a reader free: %d turns, %v; want 40", turnCount(r.thread), r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end in ten seconds once a reader was free")
	}
}

// waitsForReader is a read's context that reports, the first time it is
// asked for its Done channel, whether the store's writer is held then. A
// read asks only when it waits for a reader: its statements run on a
// context that cannot end (statementContext).
type waitsForReader struct {
	context.Context
	writer chan struct{}
	asked  sync.Once
	held   chan bool
}

func (w *waitsForReader) Done() <-chan struct{} {
	w.asked.Do(func() { w.held <- len(w.writer) > 0 })
	return w.Context.Done()
}

func turnCount(t *memory.Thread) int {
	if t == nil {
		return 0
	}
	return len(t.Turns)
}
