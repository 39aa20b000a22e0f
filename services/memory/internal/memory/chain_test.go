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

func (r *rewritten) GetWithin(ctx context.Context, id string, now time.Time, max int64) (*memory.Thread, bool,
	error) {
	t, heavier, err := r.Store.GetWithin(ctx, id, now, max)
	if err == nil && !heavier && id == r.id && r.read != nil {
		r.read(t)
	}
	return t, heavier, err
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
		// Its head weighed it light; written anew, heavier, by its read.
		"grown past its head": {head: func(t *memory.Thread) { t.Weight = 1 }, alone: true},
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

// growing is a store whose thread grows past its weight once, right after
// a read found it heavier than a room: another process writes it anew
// between the read that weighs it and the read that reads it.
type growing struct {
	memory.Store
	grow func()
	done bool
}

func (g *growing) GetWithin(ctx context.Context, id string, now time.Time, max int64) (*memory.Thread, bool,
	error) {
	t, heavier, err := g.Store.GetWithin(ctx, id, now, max)
	if heavier && !g.done {
		g.done = true
		g.grow()
	}
	return t, heavier, err
}

// A thread is never read past the room made for it: one written anew,
// heavier, after it was weighed is weighed again and read within its new
// room (a client that replaced a light thread with a heavy one while
// reads of it waited had each read the heavy one in the light one's room).
func TestAThreadIsReadWithinItsRoom(t *testing.T) {
	t.Parallel()
	for name, read := range map[string]func(*memory.Service, string, memory.Admit) (*memory.Thread, error){
		"a chain": func(svc *memory.Service, id string, admit memory.Admit) (*memory.Thread, error) {
			chain, err := svc.ReadChain(context.Background(), id, "alice", admit)
			if err != nil {
				return nil, err
			}
			return chain[len(chain)-1], nil
		},
		"a thread alone": func(svc *memory.Service, id string, admit memory.Admit) (*memory.Thread, error) {
			return svc.ReadAlone(context.Background(), id, "alice", admit)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store := &growing{Store: memstore.New()}
			svc := memory.NewService(store, time.Hour, 50)
			th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "alice",
				Turns: exchange(strings.Repeat("q", 3<<19), "answer")})
			if err != nil {
				t.Fatal(err)
			}
			store.grow = func() {
				heavier, err := svc.Get(ctx, th.ID, "alice")
				if err != nil {
					t.Fatal(err)
				}
				heavier.Turns = append(heavier.Turns, exchange(strings.Repeat("r", 3<<19), "again")...)
				if _, err := svc.Import(ctx, "alice", []*memory.Thread{heavier}, true); err != nil {
					t.Fatal(err)
				}
			}
			var room int64
			got, err := read(svc, th.ID, func(_ context.Context, weight int64) error {
				room = weight
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Turns) != 4 || got.Weight > room {
				t.Errorf("read %d turns weighing %d in a room of %d; want the thread written anew, within its room",
					len(got.Turns), got.Weight, room)
			}
		})
	}
}
