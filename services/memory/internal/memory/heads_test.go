package memory

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// The heads kept stay within their bound, count what they hold, and never
// keep one thread's head over a quarter of the bound.
func TestTheHeadsKeptStayWithinTheirBound(t *testing.T) {
	t.Parallel()
	const bound = 64 << 10
	h := NewHeads[int](bound)
	for i := range 1000 {
		h.Put(fmt.Sprint("t", i), i, i%500)
		h.Put(fmt.Sprint("t", i), i, i%500) // again: counted once
		if h.size > bound {
			t.Fatalf("after %d heads %d bytes are kept, over the bound of %d", i+1, h.size, bound)
		}
		if v, ok := h.Get(fmt.Sprint("t", i)); !ok || v != i {
			t.Fatalf("head %d just kept reads %v, %v", i, v, ok)
		}
	}
	h.Put("huge", 1, bound/4)
	if _, ok := h.Get("huge"); ok {
		t.Error("a head over a quarter of the bound was kept")
	}
	var sum int
	for _, kept := range h.byID {
		sum += kept.size
	}
	if sum != h.size {
		t.Errorf("the heads count %d bytes, hold %d", h.size, sum)
	}
	h.Clear()
	if h.size != 0 || len(h.byID) != 0 {
		t.Errorf("after Clear: %d bytes in %d heads", h.size, len(h.byID))
	}
}

// A head too large to keep replaces none kept for the thread before: the
// old one is dropped, not served.
func TestAHeadTooLargeToKeepDropsTheOld(t *testing.T) {
	t.Parallel()
	h := NewHeads[string](4 << 10)
	h.Put("t", "old", 10)
	h.Put("t", "new", 1<<10+1)
	if v, ok := h.Get("t"); ok {
		t.Errorf("the thread's head reads %q, want none kept", v)
	}
	h.Put("t", "small", 10)
	h.Update("t", func(v *string) { *v += " and changed" })
	h.Update("absent", func(v *string) { t.Error("Update changed a head not kept") })
	if v, _ := h.Get("t"); v != "small and changed" {
		t.Errorf("updated head reads %q", v)
	}
}

// HeadSize counts at least half of what a decoded initial context holds,
// whatever its shape: the bound on what stores keep depends on it. Not
// parallel: it measures the heap.
func TestHeadSizeCountsWhatDecodingHolds(t *testing.T) {
	shapes := map[string]string{
		"a prompt":                  `{"prompt":"` + strings.Repeat("word ", 2000) + `"}`,
		"empty objects":             `{"x":[` + repeatJSON(`{}`, 2000) + `]}`,
		"one-entry objects":         `{"x":[` + repeatJSON(`{"a":0}`, 2000) + `]}`,
		"chains of one-entry maps":  `{"x":[` + repeatJSON(strings.Repeat(`{"":`, 8)+"null"+strings.Repeat(`}`, 8), 250) + `]}`,
		"objects of nine entries":   `{"x":[` + repeatJSON(`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}`, 500) + `]}`,
		"numbers, nulls and arrays": `{"x":[` + repeatJSON(`1,null,true,[],[[]]`, 2000) + `]}`,
	}
	for name, text := range shapes {
		const copies = 20
		decoded := make([]map[string]any, copies)
		before := heapOf()
		for i := range decoded {
			if err := json.Unmarshal([]byte(text), &decoded[i]); err != nil {
				t.Fatal(err)
			}
		}
		held := heapOf() - before
		counted := int64(copies * HeadSize(&Thread{InitialContext: decoded[0]}))
		if counted < held/2 {
			t.Errorf("%s: HeadSize counts %d bytes of the %d a decoding holds", name, counted/copies, held/copies)
		}
		runtime.KeepAlive(decoded)
	}
}

func repeatJSON(item string, n int) string {
	return strings.TrimSuffix(strings.Repeat(item+",", n), ",")
}

// heapOf is the heap in use once garbage is collected.
func heapOf() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
