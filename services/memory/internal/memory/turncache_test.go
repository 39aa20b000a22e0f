package memory

import (
	"fmt"
	"strings"
	"testing"
)

func TestTurnCacheStaysWithinItsBound(t *testing.T) {
	t.Parallel()
	const bound = 64 << 10
	c := NewTurnCache(bound)
	turns := []Turn{{Content: strings.Repeat("x", 1000)}, {Content: strings.Repeat("y", 1000)}}
	reads := 0
	read := func(id string) {
		t.Helper()
		if _, err := c.Read(id, "r1", len(turns), func(from int) ([]Turn, error) {
			reads++
			return append([]Turn(nil), turns[from:]...), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		read(fmt.Sprint("thread-", i))
		if c.size > bound {
			t.Fatalf("after %d threads the cache holds %d bytes, over its %d", i+1, c.size, bound)
		}
	}
	if len(c.byKey) == 0 || len(c.byKey) != c.lru.Len() {
		t.Errorf("cache holds %d threads in its map and %d in its list", len(c.byKey), c.lru.Len())
	}
	reads = 0
	read("thread-199") // the newest is kept
	read("thread-0")   // the oldest was evicted
	if reads != 1 {
		t.Errorf("decoded %d times, want once (for the evicted thread only)", reads)
	}
	c.Forget("thread-199")
	if _, ok := c.byKey["thread-199"]; ok {
		t.Error("Forget kept the thread")
	}
}

func TestTurnCacheLeavesOutOneHugeThread(t *testing.T) {
	t.Parallel()
	c := NewTurnCache(4000)
	huge := []Turn{{Content: strings.Repeat("z", 2000)}}
	if _, err := c.Read("big", "r", 1, func(int) ([]Turn, error) { return huge, nil }); err != nil {
		t.Fatal(err)
	}
	if c.size != 0 || len(c.byKey) != 0 {
		t.Errorf("a thread over a quarter of the bound was cached: %d bytes", c.size)
	}
}
