package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// appended extends a thread's turns only when the cache holds the ones
// before them, at the revision they were appended to, ending in the tail
// the store found before them; turns it holds that the store appended
// before, or that end in another tail, it drops.
func TestTurnCacheAppendedExtendsOnlyWhatItContinues(t *testing.T) {
	t.Parallel()
	turn := func(s string) Turn { return Turn{Content: s} }
	for _, tc := range []struct {
		name    string
		rev     string
		from    int
		prev    string // the tail the store found before them
		decodes int    // turns the read after the append decodes
	}{
		{"the turns before them at their revision", "r1", 2, "", 0},
		{"another revision", "r0", 2, "", 2},
		{"a gap before them", "r1", 3, "", 2},
		{"turns held past them", "r1", 1, "", 4},
		{"turns ending in another tail", "r1", 2, "another", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stored := []Turn{turn("q1"), turn("a1"), turn("q2"), turn("a2")}
			c := NewTurnCache(1 << 20)
			decoded := 0
			read := func(count int) []Turn {
				t.Helper()
				got, err := c.Read("t", "r1", count, func(from int) ([]Turn, error) {
					decoded += count - from
					return append([]Turn(nil), stored[from:count]...), nil
				})
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			read(2)
			c.appended("t", tc.rev, tc.from, tc.prev, []Turn{turn("q2"), turn("a2")}, "")
			decoded = 0
			got := read(4)
			if diff := cmp.Diff(stored, got); diff != "" {
				t.Errorf("turns (-stored +read):\n%s", diff)
			}
			if decoded != tc.decodes {
				t.Errorf("the read after the append decoded %d turns, want %d", decoded, tc.decodes)
			}
		})
	}
}

func TestTurnCacheAppendedStaysWithinItsBound(t *testing.T) {
	t.Parallel()
	c := NewTurnCache(4 * (2*turnOverhead + 100))
	if _, err := c.Read("t", "r", 1, func(int) ([]Turn, error) { return []Turn{{Content: "q"}}, nil }); err != nil {
		t.Fatal(err)
	}
	c.appended("t", "r", 1, "", []Turn{{Content: strings.Repeat("a", 200)}}, "")
	if c.size != 0 || len(c.byKey) != 0 {
		t.Errorf("a thread grown over a quarter of the bound stays cached: %d bytes", c.size)
	}
}

// A turn is charged for all it holds, not its text alone: a thread of
// short turns with workflow states or model metadata of thousands of
// values each was kept as if it held a few hundred bytes a turn, while it
// held gigabytes.
func TestTurnCacheChargesWhatATurnHolds(t *testing.T) {
	t.Parallel()
	c := NewTurnCache(64 << 10)
	wide := make([]any, 1000)
	for i := range wide {
		wide[i] = map[string]any{"k": "v"}
	}
	for name, turn := range map[string]Turn{
		"workflow state": {Content: "q", WorkflowState: map[string]any{"steps": wide}},
		"model metadata": {Content: "a", ModelMetadata: map[string]any{"usage": wide}},
		"images":         {Content: "q", Images: []string{strings.Repeat("i", 20_000)}},
		"files":          {Content: "q", Files: []FileRef{{Path: strings.Repeat("p", 20_000)}}},
	} {
		turns := []Turn{turn}
		if _, err := c.Read(name, "r", 1, func(int) ([]Turn, error) { return turns, nil }); err != nil {
			t.Fatal(err)
		}
		if _, ok := c.byKey[name]; ok {
			t.Errorf("a turn whose %s is past a quarter of the bound was cached: %d bytes charged", name,
				turnBytes(turns))
		}
	}
}
