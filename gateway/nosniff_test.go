package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
)

// TestEveryAnswerSaysNosniff: the generated routes' answers, refusals and
// successes alike, say nosniff as the gateway's own do; theirs said
// nothing.
func TestEveryAnswerSaysNosniff(t *testing.T) {
	t.Parallel()
	mem := &fakeMemory{threads: []*memoryv1.Thread{thread("t1", "", "chat", 1)}}
	h := browseGateway(t, mem, "")
	got := map[string]string{}
	for _, path := range []string{"/v1/threads?page_size=5", "/v1/threads/t1", "/v1/threads/none", "/v1/nothing",
		"/healthz", "/"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil))
		got[path] = rec.Header().Get("X-Content-Type-Options")
	}
	want := map[string]string{"/v1/threads?page_size=5": "nosniff", "/v1/threads/t1": "nosniff",
		"/v1/threads/none": "nosniff", "/v1/nothing": "nosniff", "/healthz": "nosniff", "/": "nosniff"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("X-Content-Type-Options by path (-want +got):\n%s", diff)
	}
}
