package gateway

import (
	"io"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
)

// BenchmarkThreadRead reads a thread at memory's bound (32 MiB: 16 turns of
// 2 MiB) through the gateway, and reports the heap above where it started
// at its highest during the read (sampled every millisecond), in MB, with
// the collector at GOGC 10 so that the heap is mostly what is live. The
// fake memory serving it is in the same process: its answer's encoding
// is counted too.
//
//	go test -run '^$' -bench ThreadRead -benchtime 10x ./gateway
func BenchmarkThreadRead(b *testing.B) {
	var turns []*memoryv1.Turn
	for i := range 16 {
		turns = append(turns, &memoryv1.Turn{Role: memoryv1.Role(1 + i%2), Content: strings.Repeat("a", 2<<20-64)})
	}
	mem := &fakeMemory{threads: []*memoryv1.Thread{thread("big", "", "chat", 1, turns...)}}
	h := gatewayOverBench(b, mem)
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var peak atomic.Uint64
	for b.Loop() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		done := make(chan struct{})
		go func() {
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > base && ms.HeapAlloc-base > peak.Load() {
					peak.Store(ms.HeapAlloc - base)
				}
				select {
				case <-done:
					return
				case <-tick.C:
				}
			}
		}()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/v1/threads/big", nil))
		close(done)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body.String()[:200])
		}
		_, _ = io.Copy(io.Discard, rec.Body)
	}
	b.ReportMetric(float64(peak.Load())/1e6, "peak-heap-mb")
}
