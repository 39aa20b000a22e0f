package memory_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/storetest"
)

// HeadSize counts at least half of what a decoded initial context holds,
// whatever its shape: the bound on what stores keep depends on it. Not
// parallel: it measures the heap.
func TestHeadSizeCountsWhatDecodingHolds(t *testing.T) {
	shapes := map[string]string{
		"a prompt":          `{"prompt":"` + strings.Repeat("word ", 2000) + `"}`,
		"empty objects":     `{"x":[` + repeatJSON(`{}`, 2000) + `]}`,
		"one-entry objects": `{"x":[` + repeatJSON(`{"a":0}`, 2000) + `]}`,
		"chains of one-entry maps": `{"x":[` +
			repeatJSON(strings.Repeat(`{"":`, 8)+"null"+strings.Repeat(`}`, 8), 250) + `]}`,
		"objects of nine entries": `{"x":[` +
			repeatJSON(`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}`, 500) + `]}`,
		"numbers, nulls and arrays": `{"x":[` + repeatJSON(`1,null,true,[],[[]]`, 2000) + `]}`,
	}
	for name, text := range shapes {
		const copies = 20
		decoded := make([]map[string]any, copies)
		before := storetest.HeapBytes()
		for i := range decoded {
			if err := json.Unmarshal([]byte(text), &decoded[i]); err != nil {
				t.Fatal(err)
			}
		}
		held := storetest.HeapBytes() - before
		counted := int64(copies * memory.HeadSize(&memory.Thread{InitialContext: decoded[0]}))
		if counted < held/2 {
			t.Errorf("%s: HeadSize counts %d bytes of the %d a decoding holds", name, counted/copies, held/copies)
		}
		runtime.KeepAlive(decoded)
	}
}

func repeatJSON(item string, n int) string {
	return strings.TrimSuffix(strings.Repeat(item+",", n), ",")
}
