package memory_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
)

// readCounter is a store that counts its reads.
type readCounter struct {
	memory.Store
	mu    sync.Mutex
	reads map[string]int
}

func (c *readCounter) count(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads[op]++
}

func (c *readCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reads
	c.reads = map[string]int{}
	return r
}

func (c *readCounter) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	c.count("Get")
	return c.Store.Get(ctx, id, now)
}

func (c *readCounter) GetWithin(ctx context.Context, id string, now time.Time, max int64) (*memory.Thread, bool,
	error) {
	c.count("GetWithin")
	return c.Store.GetWithin(ctx, id, now, max)
}

func (c *readCounter) BlobHeads(ctx context.Context, shas []string, now time.Time) (map[string]memory.BlobHead,
	error) {
	c.count("BlobHeads")
	return c.Store.BlobHeads(ctx, shas, now)
}

func (c *readCounter) GetBlobs(ctx context.Context, shas []string, now time.Time) (map[string]memory.Blob, error) {
	c.count("GetBlobs")
	return c.Store.GetBlobs(ctx, shas, now)
}

// TestPrepareReadsEachThreadOnce: everything a continued call needs comes
// from one read of the thread (and one of each ancestor), plus one read of
// the sizes of the files its history names and one of the contents of
// those it keeps.
func TestPrepareReadsEachThreadOnce(t *testing.T) {
	ctx := context.Background()
	store := &readCounter{Store: memstore.New(), reads: map[string]int{}}
	svc := memory.NewService(store, time.Hour, 50)
	f := blob("package a\n")
	root, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turnWith("/src/a.go", f),
		Blobs: []memory.Blob{f}})
	if err != nil {
		t.Fatal(err)
	}
	branch, err := svc.Branch(ctx, root.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	steps := memory.Served(exchange("step", "looked"), memory.ModelWindow{Model: "m", ContextWindow: 100_000})
	steps[0].ToolName, steps[1].ToolName = "debug", "debug"
	steps[1].WorkflowState = map[string]any{"step": 1.0}
	if _, err := svc.Append(ctx, branch.ID, "", memory.Exchange{}, steps, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		id     string
		window *memory.ModelWindow
		want   map[string]int
		state  map[string]any
		model  string
	}{
		{"a thread", root.ID, &memory.ModelWindow{Model: "gpt-5", ContextWindow: 400_000},
			map[string]int{"GetWithin": 1, "BlobHeads": 1, "GetBlobs": 1}, nil, "gpt-5"},
		{"a branch and its parent, inheriting the model", branch.ID, nil,
			map[string]int{"GetWithin": 2, "BlobHeads": 1, "GetBlobs": 1}, map[string]any{"step": 1.0}, "m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store.take()
			p, err := svc.Prepare(ctx, tc.id, "", "debug", tc.window)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, store.take()); diff != "" {
				t.Errorf("store reads (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.state, p.WorkflowState); diff != "" {
				t.Errorf("workflow state (-want +got):\n%s", diff)
			}
			if p.History == nil || p.Window.Model != tc.model || len(p.History.Files) != 1 {
				t.Errorf("history %+v for %+v, want one selected for %s with the file", p.History, p.Window, tc.model)
			}
		})
	}
}
