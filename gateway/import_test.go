package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
)

// importingMemory takes imports, the first held until release is closed,
// and tells got how many threads each brought.
type importingMemory struct {
	fakeMemory
	got     chan int
	release chan struct{}
	calls   atomic.Int32
}

func (m *importingMemory) ImportThreads(ctx context.Context,
	req *memoryv1.ImportThreadsRequest) (*memoryv1.ImportThreadsResponse, error) {
	m.got <- len(req.GetThreads())
	if m.calls.Add(1) == 1 {
		select {
		case <-m.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &memoryv1.ImportThreadsResponse{Imported: int32(len(req.GetThreads()))}, nil
}

// threadLines is an import of n threads.
func threadLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"thread_id":"00000000-0000-4000-8000-%012d","tool_name":"chat"}`+"\n", i)
	}
	return b.String()
}

func postImport(h http.Handler, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "http://localhost/v1/threads:import", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-ndjson")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// TestAnImportHoldsAtMostMaxImportThreads: one over the limit is refused,
// naming it, before memory sees any of it: an import is written whole, so
// 800,000 threads in one held memory's writer for every client.
func TestAnImportHoldsAtMostMaxImportThreads(t *testing.T) {
	t.Parallel()
	mem := &importingMemory{got: make(chan int, 2), release: make(chan struct{})}
	close(mem.release)
	h := gatewayOver(t, mem, "")
	if rec := postImport(h, threadLines(maxImportThreads+1)); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), fmt.Sprint(maxImportThreads)) {
		t.Errorf("an import of %d threads: %d %s, want 400 naming the limit", maxImportThreads+1, rec.Code, rec.Body)
	}
	if rec := postImport(h, threadLines(maxImportThreads)); rec.Code != http.StatusOK {
		t.Errorf("an import of %d threads: %d %s", maxImportThreads, rec.Code, rec.Body)
	}
	if n := <-mem.got; n != maxImportThreads || len(mem.got) != 0 {
		t.Errorf("memory got an import of %d threads and %d more, want one of %d", n, len(mem.got), maxImportThreads)
	}
}

// TestOneImportAtATime: an import while another runs is told to come back
// (429), rather than each holding its body and threads in memory at once.
func TestOneImportAtATime(t *testing.T) {
	t.Parallel()
	mem := &importingMemory{got: make(chan int, 3), release: make(chan struct{})}
	h := gatewayOver(t, mem, "")
	first := make(chan int)
	go func() { first <- postImport(h, threadLines(1)).Code }()
	<-mem.got // the first is in memory
	if rec := postImport(h, threadLines(1)); rec.Code != http.StatusTooManyRequests {
		t.Errorf("an import while another runs: %d %s, want 429", rec.Code, rec.Body)
	}
	close(mem.release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("the first import: %d", code)
	}
	if rec := postImport(h, threadLines(1)); rec.Code != http.StatusOK {
		t.Errorf("an import after the first ended: %d %s", rec.Code, rec.Body)
	}
}
