package gateway

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// browseIDs is one page of a browse: its rows' ids and its token.
func browseIDs(t *testing.T, h http.Handler, query string) ([]string, string) {
	t.Helper()
	var page browsePage
	if code := getInto(t, h, "/v1/threads:browse?"+query, &page); code != http.StatusOK {
		t.Fatalf("browse ?%s: %d", query, code)
	}
	var ids []string
	for _, r := range page.Threads {
		ids = append(ids, r.ThreadID)
	}
	return ids, page.NextPageToken
}

// TestBrowsePagesFromTheLastRow: a page token names where the last page
// ended (its last row), not a position in memory's listing, so that
// threads deleted or updated between two pages shift no row of the next:
// before, deleting a thread of the first page skipped one of the second,
// and updating a later one (which moves it to the top) showed one twice.
func TestBrowsePagesFromTheLastRow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*fakeMemory)
		second []string // the second page after the change
	}{
		{"a thread of the first page deleted", func(m *fakeMemory) { m.remove("t10") },
			[]string{"t07", "t06", "t05", "t04", "t03"}},
		// It moves to the top: the first page shows it now.
		{"a thread of the second page updated", func(m *fakeMemory) {
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, th := range m.threads {
				if th.GetThreadId() == "t05" {
					th.LastUpdatedAt = timestamppb.New(epoch.Add(time.Hour))
				}
			}
		}, []string{"t07", "t06", "t04", "t03", "t02"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, query := range []string{"", "&query=needle"} {
				mem := &fakeMemory{}
				for i := 12; i > 0; i-- {
					mem.threads = append(mem.threads, thread(fmt.Sprintf("t%02d", i), "", "chat", i,
						&memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: "a needle"}))
				}
				h := browseGateway(t, mem, "")
				first, token := browseIDs(t, h, "page_size=5"+query)
				tc.change(mem)
				second, _ := browseIDs(t, h, "page_size=5"+query+"&page_token="+token)
				want := [][]string{{"t12", "t11", "t10", "t09", "t08"}, tc.second}
				if diff := cmp.Diff(want, [][]string{first, second}); diff != "" {
					t.Errorf("pages of %q (-want +got):\n%s", query, diff)
				}
			}
		})
	}
}

// TestThreadSummaryForPolling: the summary the page polls changes when
// the thread gets a turn, and names a missing thread as the view does. It
// reads none of the turns: every 2 s for each open thread, it read the
// whole thread from memory.
func TestThreadSummaryForPolling(t *testing.T) {
	t.Parallel()
	th := thread("live", "", "chat", 1, &memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: "hello"})
	mem := &fakeMemory{threads: []*memoryv1.Thread{th}}
	h := browseGateway(t, mem, "")
	var before, after threadSummary
	if code := getInto(t, h, "/v1/threads/live/summary", &before); code != http.StatusOK {
		t.Fatalf("summary: %d", code)
	}
	mem.mu.Lock()
	th.Turns = append(th.Turns, &memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "hi"})
	th.LastUpdatedAt = timestamppb.New(epoch.Add(time.Hour))
	mem.mu.Unlock()
	if code := getInto(t, h, "/v1/threads/live/summary", &after); code != http.StatusOK {
		t.Fatalf("summary: %d", code)
	}
	want := []threadSummary{
		{ThreadID: "live", LastUpdatedAt: epoch.Add(time.Minute), TurnCount: 1},
		{ThreadID: "live", LastUpdatedAt: epoch.Add(time.Hour), TurnCount: 2},
	}
	if diff := cmp.Diff(want, []threadSummary{before, after}); diff != "" {
		t.Errorf("summaries (-want +got):\n%s", diff)
	}
	var missing map[string]any
	if code := getInto(t, h, "/v1/threads/gone/summary", &missing); code != http.StatusNotFound {
		t.Errorf("the summary of a missing thread: %d %v", code, missing)
	}
	if mem.fullReads != 0 {
		t.Errorf("the summaries read the whole thread %d times, want none", mem.fullReads)
	}
}
