package sqlitestore

import (
	"bufio"
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// holdReadMarksEnv, set, makes the test binary a neighbour process that
// holds the WAL read marks of the file it names (see holdReadMarks).
const holdReadMarksEnv = "SQLITESTORE_HOLD_READ_MARKS"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdReadMarksEnv); path != "" {
		holdReadMarks(path)
		return
	}
	os.Exit(m.Run())
}

// holdReadMarks locks the five read marks of path's WAL index (bytes 123 to
// 127 of its -shm file, where SQLite's unix VFS keeps them), says so on
// stdout, and keeps them until stdin closes. No reader of the file can
// start meanwhile: each waits out its busy timeout.
func holdReadMarks(path string) {
	f, err := os.OpenFile(path+"-shm", os.O_RDWR, 0)
	if err != nil {
		panic(err)
	}
	lock := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 123, Len: 5}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lock); err != nil {
		panic(err)
	}
	os.Stdout.WriteString("held\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// TestAReadLeavesWithItsCaller: a neighbour process keeps every reader
// waiting (another zen recovering a large WAL does the same). A read whose
// caller gives up meanwhile leaves at once instead of queueing for a
// reader, so abandoned reads do not pile up behind the lock; only those
// already in a connection (a reader's, or the writer's, which a read takes
// when no write holds it) wait out the busy timeout.
func TestAReadLeavesWithItsCaller(t *testing.T) {
	t.Parallel()
	const busy = time.Second
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := OpenWithTimeout(path, busy)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	th := chatThread(now)
	if err := s.Create(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	neighbour := osexec.Command(os.Args[0], "-test.run=^$")
	neighbour.Env = append(os.Environ(), holdReadMarksEnv+"="+path)
	release, err := neighbour.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := neighbour.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := neighbour.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		release.Close()
		_ = neighbour.Wait()
	}() // and earlier, once the reads that can leave have
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		t.Fatalf("the neighbour did not take the read marks: %q, %v", line, err)
	}

	readers := cap(s.reads.slots) + 1 // and the idle writer
	calls := 2 * readers
	var wg sync.WaitGroup
	took := make(chan time.Duration, calls)
	for range calls {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, _ = s.Get(ctx, th.ID, now)
			took <- time.Since(start)
		})
	}
	// The reads that found no reader free should be back well within the
	// busy timeout; then the neighbour lets the others go.
	left := 0
	deadline := time.After(busy / 2)
wait:
	for left < calls-readers {
		select {
		case <-took:
			left++
		case <-deadline:
			break wait
		}
	}
	// The others are in a connection, held by the neighbour: none ends before
	// it lets go (else the neighbour blocks nothing, and the test proves
	// nothing).
	select {
	case <-took:
		t.Error("a read ended while the neighbour held the read marks")
	case <-time.After(50 * time.Millisecond):
	}
	release.Close()
	wg.Wait()
	if left < calls-readers {
		t.Errorf("%d of %d reads left with their callers before the busy timeout, want at least the %d "+
			"that found no reader free", left, calls, calls-readers)
	}
}
