package memory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
)

// TestOneClientCannotFillTheStore: every client's threads share one store,
// and one client filled it (imports of 64 MiB, back to back, each keeping
// its threads three hours), so that no other client's answer was saved. A
// client's live threads weigh at most what LimitClients says together: a
// write past it is refused whole, saying so, while other clients write on,
// and threads deleted or expired make room again.
func TestOneClientCannotFillTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const limit = 1 << 20
	svc := bounded(memstore.New(), limit, func() time.Time { return now })
	// A quarter of the bound, and a little more (the question, and a
	// thread's overhead): three fit, a fourth does not.
	big := func() []memory.Turn { return exchange("q", strings.Repeat("x", limit/4)) }

	var kept []*memory.Thread
	for range 3 {
		th, err := chatIn(svc, "mallory", big())
		if err != nil {
			t.Fatalf("a create within the client's room: %v", err)
		}
		kept = append(kept, th)
	}
	_, err := chatIn(svc, "mallory", big())
	if !errors.Is(err, memory.ErrClientFull) || !strings.Contains(err.Error(), "ZEN_CLIENT_STORE_MB") {
		t.Errorf("a create past the client's room: %v, want ErrClientFull naming ZEN_CLIENT_STORE_MB", err)
	}
	if _, err := svc.Append(ctx, kept[0].ID, "mallory", memory.Exchange{ID: "x"}, big(), nil); !errors.Is(err,
		memory.ErrClientFull) {
		t.Errorf("an append past the client's room: %v, want ErrClientFull", err)
	}
	imported := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", Turns: big()}
	if _, err := svc.Import(ctx, "mallory", []*memory.Thread{imported}, false); !errors.Is(err, memory.ErrClientFull) {
		t.Errorf("an import past the client's room: %v, want ErrClientFull", err)
	}
	if _, err := chatIn(svc, "alice", big()); err != nil {
		t.Errorf("another client's create: %v, want it stored", err)
	}
	// A thread deleted makes room.
	if err := svc.Delete(ctx, kept[0].ID, "mallory"); err != nil {
		t.Fatal(err)
	}
	if _, err := chatIn(svc, "mallory", big()); err != nil {
		t.Errorf("a create once a thread was deleted: %v, want it stored", err)
	}
	// Expired threads weigh nothing.
	now = now.Add(2 * time.Hour)
	for range 3 {
		if _, err := chatIn(svc, "mallory", big()); err != nil {
			t.Fatalf("a create once the client's threads expired: %v", err)
		}
	}
}

// TestAClientsRoomIsNotReweighedOnEveryWrite: the bound is kept without
// reading every thread of the client on each write (its threads may be
// thousands): they are weighed when the count this process keeps nears
// the bound, and once a minute.
func TestAClientsRoomIsNotReweighedOnEveryWrite(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store := &weighsCounted{Store: memstore.New()}
	svc := bounded(store, 1<<30, func() time.Time { return now })
	for range 100 {
		if _, err := chatIn(svc, "alice", exchange("q", "a")); err != nil {
			t.Fatal(err)
		}
	}
	if store.weighs != 1 {
		t.Errorf("100 light writes weighed the client's threads %d times, want once", store.weighs)
	}
	now = now.Add(2 * time.Minute)
	if _, err := chatIn(svc, "alice", exchange("q", "a")); err != nil {
		t.Fatal(err)
	}
	if store.weighs != 2 {
		t.Errorf("a write two minutes on: %d weighings in all, want 2", store.weighs)
	}
}

type weighsCounted struct {
	memory.Store
	weighs int
}

func (w *weighsCounted) ClientWeight(ctx context.Context, client string, now time.Time) (int64, error) {
	w.weighs++
	return w.Store.ClientWeight(ctx, client, now)
}

// TestAClientAtItsBoundIsNotReweighedOnEveryWrite: a client at its bound
// could have every write of its own read all its threads (a million tiny
// ones, an import's); it is weighed at most every few seconds, the count
// this process keeps deciding in between.
func TestAClientAtItsBoundIsNotReweighedOnEveryWrite(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store := &weighsCounted{Store: memstore.New()}
	const limit = 1 << 20
	svc := bounded(store, limit, func() time.Time { return now })
	for range 3 {
		if _, err := chatIn(svc, "mallory", exchange("q", strings.Repeat("x", limit/4))); err != nil {
			t.Fatal(err)
		}
	}
	before := store.weighs
	for range 20 {
		_, err := chatIn(svc, "mallory", exchange("q", strings.Repeat("x", limit/4)))
		if !errors.Is(err, memory.ErrClientFull) {
			t.Fatalf("a write past the bound: %v, want ErrClientFull", err)
		}
	}
	if n := store.weighs - before; n > 1 {
		t.Errorf("20 writes at the bound weighed the client's threads %d times, want at most once", n)
	}
	// Some seconds on, what was deleted or expired meanwhile may make room:
	// the next write weighs again.
	before = store.weighs
	now = now.Add(6 * time.Second)
	if _, err := chatIn(svc, "mallory", exchange("q", strings.Repeat("x", limit/4))); !errors.Is(err, memory.ErrClientFull) {
		t.Fatalf("a write past the bound: %v, want ErrClientFull", err)
	}
	if n := store.weighs - before; n != 1 {
		t.Errorf("a write at the bound 6 s on weighed the client's threads %d times, want once", n)
	}
	// A writer whose time was taken before that weighing (it waited since)
	// finds it as recent.
	before = store.weighs
	now = now.Add(-time.Second)
	if _, err := chatIn(svc, "mallory", exchange("q", strings.Repeat("x", limit/4))); !errors.Is(err, memory.ErrClientFull) {
		t.Fatalf("a write past the bound: %v, want ErrClientFull", err)
	}
	if n := store.weighs - before; n != 0 {
		t.Errorf("a write timed before the last weighing weighed again %d times, want none", n)
	}
}

// TestEmptyThreadsCountTowardsTheBound: a thread without turns weighs
// nothing, yet takes its row and index entries: imports of a thousand
// empty threads each went past any bound.
func TestEmptyThreadsCountTowardsTheBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := bounded(memstore.New(), 100*memory.ThreadOverhead, nil)
	empty := func(n int) []*memory.Thread {
		out := make([]*memory.Thread, n)
		for i := range out {
			out[i] = &memory.Thread{ID: uuid.NewString(), ToolName: "chat"}
		}
		return out
	}
	if _, err := svc.Import(ctx, "mallory", empty(100), false); err != nil {
		t.Fatalf("an import of 100 empty threads within the bound: %v", err)
	}
	if _, err := svc.Import(ctx, "mallory", empty(1), false); !errors.Is(err, memory.ErrClientFull) {
		t.Errorf("one more empty thread: %v, want ErrClientFull", err)
	}
	if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory"}); !errors.Is(err,
		memory.ErrClientFull) {
		t.Errorf("an empty create (a branch's) past the bound: %v, want ErrClientFull", err)
	}
}

// TestAnImportReplacingTheClientsThreadsTakesOnlyWhatItAdds: restoring
// one's own export with replace adds nothing, yet was weighed whole beside
// the threads it replaces.
func TestAnImportReplacingTheClientsThreadsTakesOnlyWhatItAdds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const mib = 1 << 20
	svc := bounded(memstore.New(), 2*mib, nil)
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", Turns: exchange("q", strings.Repeat("x", 1.5*mib))}
	if _, err := svc.Import(ctx, "alice", []*memory.Thread{th}, false); err != nil {
		t.Fatal(err)
	}
	again := &memory.Thread{ID: th.ID, ToolName: "chat", Turns: exchange("q", strings.Repeat("y", 1.5*mib))}
	if _, err := svc.Import(ctx, "alice", []*memory.Thread{again}, true); err != nil {
		t.Errorf("an import replacing the client's own thread: %v, want it stored", err)
	}
}

// TestTheUnnamedClientHasNoBound: without client tokens every caller is
// one client, and there is no other client to keep room for.
func TestTheUnnamedClientHasNoBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := bounded(memstore.New(), memory.ThreadOverhead, nil)
	for range 3 {
		if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange("q", "a")}); err != nil {
			t.Fatalf("the unnamed client's create: %v", err)
		}
	}
}

// TestAReplacingImportHasTheClientWeighedAgain: an import that replaces
// the client's threads is charged what they weighed when it read them; a
// delete of one of them meanwhile (given back at once) left the thread
// stored and out of the count, and the client wrote past its bound. The
// next write after such an import weighs the client's threads.
func TestAReplacingImportHasTheClientWeighedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &weighsCounted{Store: memstore.New()}
	svc := bounded(store, 1<<30, nil)
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", Turns: exchange("q", "a")}
	if _, err := svc.Import(ctx, "alice", []*memory.Thread{th}, false); err != nil {
		t.Fatal(err)
	}
	again := &memory.Thread{ID: th.ID, ToolName: "chat", Turns: exchange("q", "a")}
	if _, err := svc.Import(ctx, "alice", []*memory.Thread{again}, true); err != nil {
		t.Fatal(err)
	}
	before := store.weighs
	if _, err := chatIn(svc, "alice", exchange("q", "a")); err != nil {
		t.Fatal(err)
	}
	if store.weighs != before+1 {
		t.Errorf("the write after a replacing import weighed the client %d times, want once", store.weighs-before)
	}
}

// bounded is a service keeping each client's threads within limit, reading
// the time from clock (nil: the clock's).
func bounded(store memory.Store, limit int64, clock func() time.Time) *memory.Service {
	svc := memory.NewService(store, time.Hour, 50)
	if clock != nil {
		svc.SetClock(clock)
	}
	svc.LimitClients(limit)
	return svc
}

// chatIn has svc create a chat thread of client's with turns.
func chatIn(svc *memory.Service, client string, turns []memory.Turn) (*memory.Thread, error) {
	return svc.Create(context.Background(), memory.CreateParams{ToolName: "chat", ClientID: client, Turns: turns})
}
