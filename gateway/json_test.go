package gateway

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ExportThreads streams the fake's threads, or the one asked for.
func (f *fakeMemory) ExportThreads(req *memoryv1.ExportThreadsRequest,
	stream grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse]) error {
	f.mu.Lock()
	threads := f.threads
	f.mu.Unlock()
	sent := false
	for _, t := range threads {
		if id := req.GetThreadId(); id != "" && id != t.GetThreadId() {
			continue
		}
		if err := stream.Send(&memoryv1.ExportThreadsResponse{Thread: t}); err != nil {
			return err
		}
		sent = true
	}
	if !sent && req.GetThreadId() != "" {
		return status.Errorf(codes.NotFound, "thread %s was not found or has expired", req.GetThreadId())
	}
	return nil
}

// TestWriteJSONThatCannotEncode: a value JSON cannot hold answers 500 in
// the one error shape, not a 200 with an empty body.
func TestWriteJSONThatCannotEncode(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, tokenUse{CostUSD: math.Inf(1)})
	got := []any{rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("X-Content-Type-Options"),
		rec.Body.String()}
	want := []any{http.StatusInternalServerError, "application/json", "nosniff",
		`{"code":13,"message":"the gateway could not write its answer as JSON; please report this as a bug",` +
			`"details":[]}` + "\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestAnswersAreNotSniffed: the gateway's own JSON answers, like its
// errors, tell browsers to take them as JSON alone (a turn's text holds
// whatever a model or an import put there, '<' and '>' unescaped).
func TestAnswersAreNotSniffed(t *testing.T) {
	t.Parallel()
	mem := &fakeMemory{threads: []*memoryv1.Thread{thread("t1", "", "chat", 1,
		&memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: "<html><script>alert(1)</script>"})}}
	h := browseGateway(t, mem, "")
	for _, path := range []string{"/healthz", "/openapi.json", "/v1/threads:browse", "/v1/threads/t1/view",
		"/v1/threads/t1/summary", "/v1/threads:export"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost"+path, nil))
		if rec.Code != http.StatusOK || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d with X-Content-Type-Options %q, want 200 and nosniff", path, rec.Code,
				rec.Header().Get("X-Content-Type-Options"))
		}
	}
}
