package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/turnmeta"
)

// TestBrowseUsageThatOverflowsStillAnswersJSON: model_metadata comes
// from imports too, which may hold any number. Two turns costing 1e308
// each add up to +Inf, which encoding/json refuses after the 200 status
// is written: browse and view answered an empty body, and one imported
// thread broke the client's whole thread list in the page. 1e19 tokens
// overflow int64 (into a negative count). Numbers no model call can have
// read as 0 (not finite, negative) or as turnmeta's largest.
func TestBrowseUsageThatOverflowsStillAnswersJSON(t *testing.T) {
	t.Parallel()
	huge := &memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, ModelName: "m",
		ModelMetadata: meta(t, map[string]any{"usage": map[string]any{"cost_usd": 1e308, "input_tokens": 1e300,
			"output_tokens": 1e19}})}
	negative := &memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, ModelName: "m",
		ModelMetadata: meta(t, map[string]any{"usage": map[string]any{"cost_usd": -3, "input_tokens": -1e30,
			"output_tokens": -7}})}
	mem := &fakeMemory{threads: []*memoryv1.Thread{
		thread("poison", "", "chat", 2, &memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: "imported"}, huge,
			huge, negative),
		thread("fine", "", "chat", 1, &memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: "an ordinary thread"}),
	}}
	h := browseGateway(t, mem, "")
	for _, path := range []string{"/v1/threads:browse", "/v1/threads/poison/view"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost"+path, nil))
		body := strings.TrimSpace(rec.Body.String())
		if rec.Code != http.StatusOK || !strings.HasPrefix(body, "{") {
			t.Errorf("GET %s: %d with body %q, want 200 and a JSON object (a cost that overflows shown as "+
				"something finite, or left out)", path, rec.Code, body)
		}
	}
	var page browsePage
	if code := getInto(t, h, "/v1/threads:browse", &page); code != http.StatusOK || len(page.Threads) != 2 {
		t.Fatalf("browse: %d, %d rows", code, len(page.Threads))
	}
	want := tokenUse{InputTokens: 2 * turnmeta.MaxTokens, OutputTokens: 2 * turnmeta.MaxTokens,
		CostUSD: 2 * turnmeta.MaxCostUSD}
	if diff := cmp.Diff(want, page.Threads[0].tokenUse); diff != "" {
		t.Errorf("the imported thread's usage (-want +got):\n%s", diff)
	}
}

// TestViewDoesNotMultiplyTheThread: writeJSON escapes '<', '>'
// and '&' as \u003c and so on, so a turn of such characters came back six
// times its size: a 60 MB thread answered 377 MB of JSON (GET
// /v1/threads/{id} answers 63 MB), which the page then fetched again every
// two seconds.
func TestViewDoesNotMultiplyTheThread(t *testing.T) {
	t.Parallel()
	const size = 1 << 20
	mem := &fakeMemory{threads: []*memoryv1.Thread{thread("big", "", "chat", 1,
		&memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: strings.Repeat("<", size)})}}
	h := browseGateway(t, mem, "")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/v1/threads/big/view", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() > 2*size {
		t.Errorf("GET the view of a thread holding %d bytes: %d with %d bytes, want 200 and at most %d",
			size, rec.Code, rec.Body.Len(), 2*size)
	}
}

// TestViewFindsAParentBeyondTheListing: the view finds a thread's
// parent only among the first 20 pages of the client's list, and calls a
// parent it did not meet "missing", which the page shows as "gone:
// expired, deleted, or not yours", for a parent that is there (and one
// GetThread away).
func TestViewFindsAParentBeyondTheListing(t *testing.T) {
	t.Parallel()
	mem := &fakeMemory{}
	const many = scanPages*maxBrowsePageSize + 10
	for i := many; i > 0; i-- { // newest first: the child, then many others, then its parent
		id, parent := fmt.Sprintf("t%05d", i), ""
		if i == many {
			parent = "t00001"
		}
		mem.threads = append(mem.threads, thread(id, parent, "chat", i,
			&memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: "question " + id}))
	}
	var v threadView
	if code := getInto(t, browseGateway(t, mem, ""), fmt.Sprintf("/v1/threads/t%05d/view", many), &v); code != 200 {
		t.Fatalf("view: %d", code)
	}
	if v.Parent == nil || v.Parent.Missing || v.Parent.FirstPrompt != "question t00001" {
		t.Errorf("the parent, which exists, shows as %+v; want it found", v.Parent)
	}
}
