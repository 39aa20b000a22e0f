package memory

// DefaultHeadBytes bounds the thread heads a store keeps decoded (see
// Heads): a thread's head is small but for its initial context, which
// holds the first call's arguments, its prompt among them.
const DefaultHeadBytes = 16 << 20

// headOverhead is what keeping a head costs besides the size it is given.
const headOverhead = 256

// Heads keeps what a store decoded of threads' heads (the thread without
// its turns), by thread id, within a bound on their sizes: a continued
// call reads its thread's head on every call, and decoding the initial
// context again was most of that read once an agent's first prompt ran to
// kilobytes. What a head is kept as, and when it is still good, is the
// store's. One thread's head never takes more than a quarter of the
// bound, and a head that would pass it makes room by dropping others, any
// of them. It is not safe for concurrent use: the store serialises it.
type Heads[V any] struct {
	max, size int
	byID      map[string]sizedHead[V]
}

type sizedHead[V any] struct {
	v    V
	size int
}

// NewHeads keeps heads up to maxBytes, counted as the sizes Put is given.
func NewHeads[V any](maxBytes int) *Heads[V] {
	return &Heads[V]{max: maxBytes, byID: map[string]sizedHead[V]{}}
}

// Get returns the head kept for the thread.
func (h *Heads[V]) Get(id string) (V, bool) {
	kept, ok := h.byID[id]
	return kept.v, ok
}

// Put keeps v as the thread's head, size bytes of it (its encoding, say).
func (h *Heads[V]) Put(id string, v V, size int) {
	h.Forget(id)
	size += headOverhead
	if size > h.max/4 {
		return // one thread never takes over the heads kept
	}
	for other := range h.byID {
		if h.size+size <= h.max {
			break
		}
		h.Forget(other) // any: a map's order is as good as another here
	}
	h.byID[id] = sizedHead[V]{v: v, size: size}
	h.size += size
}

// Update changes the thread's head in place, when one is kept: its size
// stays as it was put.
func (h *Heads[V]) Update(id string, change func(*V)) {
	if kept, ok := h.byID[id]; ok {
		change(&kept.v)
		h.byID[id] = kept
	}
}

// Forget drops the thread's head.
func (h *Heads[V]) Forget(id string) {
	if kept, ok := h.byID[id]; ok {
		h.size -= kept.size
		delete(h.byID, id)
	}
}

// Clear drops every head.
func (h *Heads[V]) Clear() {
	clear(h.byID)
	h.size = 0
}

// HeadSize estimates what keeping t's head decoded costs: its strings,
// and its initial context as decoded, which JSON of small values (empty
// objects, say) makes many times the size of its text. The turns are not
// counted.
func HeadSize(t *Thread) int {
	return len(t.ID) + len(t.ParentID) + len(t.ToolName) + len(t.ClientID) + decodedSize(t.InitialContext)
}

// decodedSize estimates the memory a value decoded from JSON holds: a
// word or two for each value, the bytes of each string, a map's slots.
func decodedSize(v any) int {
	const word = 8
	switch v := v.(type) {
	case string:
		return 2*word + len(v)
	case map[string]any:
		n := 6 * word
		if len(v) > 0 {
			// Go's maps hold their entries in groups of eight slots (a key and
			// a value, four words, each), the first group whole from the first
			// entry, and room to grow past those filled.
			n += max(8, 2*len(v)) * 4 * word
		}
		for k, e := range v {
			n += len(k) + decodedSize(e)
		}
		return n
	case []any:
		n := 3 * word
		for _, e := range v {
			n += 2*word + decodedSize(e)
		}
		return n
	default:
		return 2 * word
	}
}
