package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/auth"
)

// importingMemory takes imports, those held kept until release is
// closed, and tells got how many threads each brought.
type importingMemory struct {
	fakeMemory
	got     chan int
	release chan struct{}
	held    map[string]bool // by the tool name of an import's first thread (clientImport)
}

func (m *importingMemory) ImportThreads(ctx context.Context,
	req *memoryv1.ImportThreadsRequest) (*memoryv1.ImportThreadsResponse, error) {
	m.got <- len(req.GetThreads())
	if len(req.GetThreads()) > 0 && m.held[req.GetThreads()[0].GetToolName()] {
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
	return postImportAs(h, "", body)
}

// clientImport is an import of one thread that names client as its tool,
// so that importingMemory can tell whose it is.
func clientImport(client string) string {
	return `{"thread_id":"00000000-0000-4000-8000-000000000001","tool_name":"` + client + `"}` + "\n"
}

// postImportAs imports body as client, as the token check before the
// gateway would name it.
func postImportAs(h http.Handler, client, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "http://localhost/v1/threads:import", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-ndjson")
	if client != "" {
		r = r.WithContext(auth.WithClient(r.Context(), client))
	}
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

// TestOneImportAtATimeAClient: an import while the same client's last
// runs is told to come back (429), while another client's goes in: a
// client that sends slowly keeps itself waiting, not everyone. At most
// maxImports run at once, each holding its body and threads in memory.
func TestOneImportAtATimeAClient(t *testing.T) {
	t.Parallel()
	held := map[string]bool{"bob": true}
	for i := range maxImports - 1 {
		held[fmt.Sprint("client-", i)] = true
	}
	mem := &importingMemory{got: make(chan int, 2*maxImports), release: make(chan struct{}), held: held}
	h := gatewayOver(t, mem, "")
	answered := make(chan int, maxImports)
	for client := range held {
		go func() { answered <- postImportAs(h, client, clientImport(client)).Code }()
		<-mem.got // in memory, held
	}
	if rec := postImportAs(h, "bob", clientImport("bob")); rec.Code != http.StatusTooManyRequests ||
		!strings.Contains(rec.Body.String(), "your import before this one") {
		t.Errorf("bob's import while his last runs: %d %s, want 429", rec.Code, rec.Body)
	}
	if rec := postImportAs(h, "carol", clientImport("carol")); rec.Code != http.StatusTooManyRequests ||
		!strings.Contains(rec.Body.String(), fmt.Sprint(maxImports, " imports are running")) {
		t.Errorf("carol's import while %d run: %d %s, want 429", maxImports, rec.Code, rec.Body)
	}
	close(mem.release)
	for range held {
		if code := <-answered; code != http.StatusOK {
			t.Errorf("a held import: %d", code)
		}
	}
	if rec := postImportAs(h, "bob", clientImport("bob")); rec.Code != http.StatusOK {
		t.Errorf("bob's import after his last ended: %d %s", rec.Code, rec.Body)
	}
}

// TestAnotherClientsImportGoesIn while one client's runs.
func TestAnotherClientsImportGoesIn(t *testing.T) {
	t.Parallel()
	mem := &importingMemory{got: make(chan int, 3), release: make(chan struct{}), held: map[string]bool{"bob": true}}
	h := gatewayOver(t, mem, "")
	go postImportAs(h, "bob", clientImport("bob"))
	<-mem.got
	if rec := postImportAs(h, "alice", clientImport("alice")); rec.Code != http.StatusOK {
		t.Errorf("alice's import while bob's runs: %d %s", rec.Code, rec.Body)
	}
	close(mem.release)
}

// TestAnImportIsReadAsItArrives: an import is refused at its first thread
// past the limit, while the rest of its body is still on its way; the
// gateway read the whole body (64 MiB, and then its threads) before it
// looked at a line.
func TestAnImportIsReadAsItArrives(t *testing.T) {
	t.Parallel()
	h := gatewayOver(t, &importingMemory{got: make(chan int, 1)}, "")
	body, sender := io.Pipe()
	t.Cleanup(func() { body.Close() })
	go func() { _, _ = io.WriteString(sender, threadLines(maxImportThreads+1)) }() // and no end
	r := httptest.NewRequest("POST", "http://localhost/v1/threads:import", body)
	r.Header.Set("Content-Type", "application/x-ndjson")
	rec := httptest.NewRecorder()
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		h.ServeHTTP(rec, r)
	}()
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("an import past its limit was not answered before its body ended")
	}
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), fmt.Sprint(maxImportThreads)) {
		t.Errorf("an import of %d threads: %d %s, want 400 naming the limit", maxImportThreads+1, rec.Code, rec.Body)
	}
}

// TestAnImportHasASize: a body past maxImportBytes is refused (413, naming
// the limit), at once when it declares its length, and where it crosses
// the limit when it does not, though the line it cut is no thread.
func TestAnImportHasASize(t *testing.T) {
	t.Parallel()
	h := gatewayOver(t, &importingMemory{got: make(chan int, 1)}, "")
	line := `{"thread_id":"00000000-0000-4000-8000-000000000001","tool_name":"` + strings.Repeat("a", 100<<10) + "\"}\n"
	for _, tc := range []struct {
		name     string
		declared bool
	}{{"declared", true}, {"chunked", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := &repeated{s: line}
			r := httptest.NewRequest("POST", "http://localhost/v1/threads:import",
				io.LimitReader(body, 2*maxImportBytes))
			if tc.declared {
				r.ContentLength = 2 * maxImportBytes
			}
			r.Header.Set("Content-Type", "application/x-ndjson")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			want := fmt.Sprint("takes a body of at most ", maxImportBytes, " bytes: split the file")
			if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), want) {
				t.Errorf("an import of over %d bytes: %d %s, want 413 with %q", maxImportBytes, rec.Code, rec.Body, want)
			}
			if tc.declared && body.read != 0 {
				t.Errorf("an import declared too large was read (%d bytes), want it refused unread", body.read)
			}
		})
	}
}

// repeated reads s over and over.
type repeated struct {
	s    string
	off  int
	read int
}

func (r *repeated) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	r.read += n
	return n, nil
}
