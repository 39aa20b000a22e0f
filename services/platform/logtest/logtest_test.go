package logtest

import (
	"strings"
	"sync"
	"testing"
)

// TestBufferTakesConcurrentWrites: writers and a reader at once, as a test
// reads a process's log while it runs (go test -race finds a missing lock);
// every write is kept whole.
func TestBufferTakesConcurrentWrites(t *testing.T) {
	t.Parallel()
	var buf Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = buf.Write([]byte("line\n"))
				_ = buf.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(buf.String(), "line\n"); got != 400 {
		t.Errorf("the buffer holds %d lines, want 400", got)
	}
}
