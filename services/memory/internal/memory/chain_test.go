package memory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
)

// rewritten is a store that answers one thread's head, or its whole read,
// as written anew between the two: heads come before reads, and another
// process may write in between.
type rewritten struct {
	memory.Store
	id         string
	head, read func(*memory.Thread)
}

func (r *rewritten) Head(ctx context.Context, id string, now time.Time) (*memory.Thread, int, error) {
	t, n, err := r.Store.Head(ctx, id, now)
	if err == nil && id == r.id && r.head != nil {
		r.head(t)
	}
	return t, n, err
}

func (r *rewritten) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	t, err := r.Store.Get(ctx, id, now)
	if err == nil && id == r.id && r.read != nil {
		r.read(t)
	}
	return t, err
}

// A chain holds an ancestor only if it is the reader's, fits the chain's
// weight and has the parent its head had, whether its head or its whole
// read says otherwise: a chain never shows one client another's turns,
// nor reads past its weight; and the weight made room for is that of the
// ancestors the chain follows.
func TestAChainHoldsOnlyTheAncestorsItWeighed(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		head, read   func(*memory.Thread)
		whole, alone bool // the chain holds the parent; room was made for the child alone
	}{
		"as it was":                    {whole: true},
		"head another client's":        {head: func(t *memory.Thread) { t.ClientID = "bob" }, alone: true},
		"head past the chain's weight": {head: func(t *memory.Thread) { t.Weight = memory.MaxChainWeight }, alone: true},
		"read another client's":        {read: func(t *memory.Thread) { t.ClientID = "bob" }},
		"read past the chain's weight": {read: func(t *memory.Thread) { t.Weight = memory.MaxChainWeight }},
		"read with another parent":     {read: func(t *memory.Thread) { t.ParentID = "another" }},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := &rewritten{Store: memstore.New()}
			svc := memory.NewService(store, time.Hour, 50)
			// Heavier than a read's first guess of 1 MiB.
			parent, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "alice",
				Turns: exchange(strings.Repeat("q", 3<<19), "answer")})
			if err != nil {
				t.Fatal(err)
			}
			branch, err := svc.Branch(ctx, parent.ID, "alice")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Append(ctx, branch.ID, "alice", memory.Exchange{}, exchange("more", "said"), nil); err != nil {
				t.Fatal(err)
			}
			child, _, err := svc.Head(ctx, branch.ID, "alice")
			if err != nil || child.Weight == 0 {
				t.Fatalf("the branch: %+v, %v; want it weighing something", child, err)
			}
			store.id, store.head, store.read = parent.ID, tc.head, tc.read
			var room int64 // the last admit's, which replaces the room made before
			chain, err := svc.ReadChain(ctx, child.ID, "alice", func(_ context.Context, weight int64) error {
				room = weight
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{child.ID}
			if tc.whole {
				want = []string{parent.ID, child.ID}
			}
			var got []string
			for _, c := range chain {
				got = append(got, c.ID)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the chain (-want +got):\n%s", diff)
			}
			wantRoom := child.Weight + parent.Weight
			if tc.alone {
				wantRoom = 1 << 20 // the first guess, the child's room
			}
			if room != wantRoom {
				t.Errorf("room made for %d, want %d", room, wantRoom)
			}
		})
	}
}
