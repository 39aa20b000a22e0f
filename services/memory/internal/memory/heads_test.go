package memory

import (
	"fmt"
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
