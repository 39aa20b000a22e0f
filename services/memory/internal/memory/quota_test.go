package memory_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
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
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	svc.SetClock(func() time.Time { return now })
	const limit = 1 << 20
	svc.LimitClients(limit)
	// A quarter of the bound, and a little more (the question, and a
	// thread's overhead): three fit, a fourth does not.
	big := func() []memory.Turn { return exchange("q", strings.Repeat("x", limit/4)) }

	var kept []*memory.Thread
	for range 3 {
		th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory", Turns: big()})
		if err != nil {
			t.Fatalf("a create within the client's room: %v", err)
		}
		kept = append(kept, th)
	}
	_, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory", Turns: big()})
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
	if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "alice", Turns: big()}); err != nil {
		t.Errorf("another client's create: %v, want it stored", err)
	}
	// A thread deleted makes room.
	if err := svc.Delete(ctx, kept[0].ID, "mallory"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory", Turns: big()}); err != nil {
		t.Errorf("a create once a thread was deleted: %v, want it stored", err)
	}
	// Expired threads weigh nothing.
	now = now.Add(2 * time.Hour)
	for range 3 {
		if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory",
			Turns: big()}); err != nil {
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
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store := &weighsCounted{Store: memstore.New()}
	svc := memory.NewService(store, time.Hour, 50)
	svc.SetClock(func() time.Time { return now })
	svc.LimitClients(1 << 30)
	for range 100 {
		if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "alice",
			Turns: exchange("q", "a")}); err != nil {
			t.Fatal(err)
		}
	}
	if store.weighs != 1 {
		t.Errorf("100 light writes weighed the client's threads %d times, want once", store.weighs)
	}
	now = now.Add(2 * time.Minute)
	if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "alice",
		Turns: exchange("q", "a")}); err != nil {
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
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store := &weighsCounted{Store: memstore.New()}
	svc := memory.NewService(store, time.Hour, 50)
	svc.SetClock(func() time.Time { return now })
	const limit = 1 << 20
	svc.LimitClients(limit)
	for range 3 {
		if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory",
			Turns: exchange("q", strings.Repeat("x", limit/4))}); err != nil {
			t.Fatal(err)
		}
	}
	before := store.weighs
	for range 20 {
		_, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory",
			Turns: exchange("q", strings.Repeat("x", limit/4))})
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
	if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory",
		Turns: exchange("q", strings.Repeat("x", limit/4))}); !errors.Is(err, memory.ErrClientFull) {
		t.Fatalf("a write past the bound: %v, want ErrClientFull", err)
	}
	if n := store.weighs - before; n != 1 {
		t.Errorf("a write at the bound 6 s on weighed the client's threads %d times, want once", n)
	}
	// A writer whose time was taken before that weighing (it waited since)
	// finds it as recent.
	before = store.weighs
	now = now.Add(-time.Second)
	if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory",
		Turns: exchange("q", strings.Repeat("x", limit/4))}); !errors.Is(err, memory.ErrClientFull) {
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
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	svc.LimitClients(100 * memory.ThreadOverhead)
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

// TestWritesAtOnceShareTheRoom: a weighing sees only what is stored, and
// writes near the bound at once were each admitted beside what was stored,
// none beside the others: 16 writes of 3 MiB at 27 of 32 MiB all went in.
// Here 8 of a unit go at 6 units of 8 (a unit and a thread's overhead
// each): one fits.
func TestWritesAtOnceShareTheRoom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &gatedCreates{Store: memstore.New(), gate: make(chan struct{})}
	svc := memory.NewService(store, time.Hour, 50)
	const unit = 64 << 10
	svc.LimitClients(8 * unit)
	text := func(n int) []memory.Turn { return exchange("q", strings.Repeat("x", n)) }
	store.open()
	if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory",
		Turns: text(6 * unit)}); err != nil {
		t.Fatal(err)
	}
	store.close()
	var wg sync.WaitGroup
	var admitted atomic.Int32
	for range 8 {
		wg.Go(func() {
			if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory",
				Turns: text(unit)}); err == nil {
				admitted.Add(1)
			} else if !errors.Is(err, memory.ErrClientFull) {
				t.Error(err)
			}
		})
	}
	store.waitFor(t, 1) // the one that fits is held in the store
	store.open()        // and the others were refused meanwhile, or go in now
	wg.Wait()
	if n := admitted.Load(); n != 1 {
		t.Errorf("%d writes of a unit at once went in beside 6 units of 8, want 1", n)
	}
}

// gatedCreates holds each Create until the gate opens.
type gatedCreates struct {
	memory.Store
	gate    chan struct{}
	mu      sync.Mutex
	waiting int
}

func (g *gatedCreates) Create(ctx context.Context, t *memory.Thread) error {
	g.mu.Lock()
	g.waiting++
	gate := g.gate
	g.mu.Unlock()
	<-gate
	return g.Store.Create(ctx, t)
}

func (g *gatedCreates) open() { g.mu.Lock(); close(g.gate); g.mu.Unlock() }
func (g *gatedCreates) close() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.waiting = 0
	g.mu.Unlock()
}

// waitFor waits until n creates are held at the gate.
func (g *gatedCreates) waitFor(t *testing.T, n int) { <-g.reached(t, n) }

// reached is closed once n creates are held at the gate; its watch ends
// with the test.
func (g *gatedCreates) reached(t *testing.T, n int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for {
			g.mu.Lock()
			w := g.waiting
			g.mu.Unlock()
			if w >= n {
				close(done)
				return
			}
			select {
			case <-t.Context().Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return done
}

// TestAnImportReplacingTheClientsThreadsTakesOnlyWhatItAdds: restoring
// one's own export with replace adds nothing, yet was weighed whole beside
// the threads it replaces.
func TestAnImportReplacingTheClientsThreadsTakesOnlyWhatItAdds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	const mib = 1 << 20
	svc.LimitClients(2 * mib)
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
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	svc.LimitClients(memory.ThreadOverhead)
	for range 3 {
		if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange("q", "a")}); err != nil {
			t.Fatalf("the unnamed client's create: %v", err)
		}
	}
}

// TestAWeighingCountsTheWritesNotYetStored: a weighing reads what is
// stored, so a write admitted before it and still being stored is added
// to it; else a write weighed meanwhile was admitted beside the stored
// threads alone.
func TestAWeighingCountsTheWritesNotYetStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store := &gatedCreates{Store: memstore.New(), gate: make(chan struct{})}
	svc := memory.NewService(store, time.Hour, 50)
	svc.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	const unit = 64 << 10
	svc.LimitClients(8 * unit)
	text := func(n int) []memory.Turn { return exchange("q", strings.Repeat("x", n)) }
	store.open()
	if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory",
		Turns: text(4 * unit)}); err != nil {
		t.Fatal(err)
	}
	store.close()
	first := make(chan error, 1)
	go func() {
		_, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory", Turns: text(3 * unit)})
		first <- err
	}()
	store.waitFor(t, 1) // admitted by the count, and being stored
	mu.Lock()
	now = now.Add(2 * quotaWeighedAgain)
	mu.Unlock()
	second := make(chan error, 1)
	go func() {
		_, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory", Turns: text(3 * unit)})
		second <- err
	}()
	// Refused, or admitted: then it reaches the store, and waits there.
	select {
	case err := <-second:
		if !errors.Is(err, memory.ErrClientFull) {
			t.Errorf("a write weighed while another was being stored: %v, want ErrClientFull", err)
		}
	case <-store.reached(t, 2):
		t.Error("a write weighed while another was being stored was admitted beside the stored threads alone")
	}
	store.open()
	if err := <-first; err != nil {
		t.Errorf("the write being stored: %v", err)
	}
}

// quotaWeighedAgain is past the time a client's count is trusted.
const quotaWeighedAgain = time.Minute

// TestAReplacingImportHasTheClientWeighedAgain: an import that replaces
// the client's threads is charged what they weighed when it read them; a
// delete of one of them meanwhile (given back at once) left the thread
// stored and out of the count, and the client wrote past its bound. The
// next write after such an import weighs the client's threads.
func TestAReplacingImportHasTheClientWeighedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &weighsCounted{Store: memstore.New()}
	svc := memory.NewService(store, time.Hour, 50)
	svc.LimitClients(1 << 30)
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", Turns: exchange("q", "a")}
	if _, err := svc.Import(ctx, "alice", []*memory.Thread{th}, false); err != nil {
		t.Fatal(err)
	}
	again := &memory.Thread{ID: th.ID, ToolName: "chat", Turns: exchange("q", "a")}
	if _, err := svc.Import(ctx, "alice", []*memory.Thread{again}, true); err != nil {
		t.Fatal(err)
	}
	before := store.weighs
	if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "alice",
		Turns: exchange("q", "a")}); err != nil {
		t.Fatal(err)
	}
	if store.weighs != before+1 {
		t.Errorf("the write after a replacing import weighed the client %d times, want once", store.weighs-before)
	}
}

// TestAWriteStoredWhileTheClientIsWeighedStaysCounted: a weighing reads
// the store while writes go on; one admitted before it that is stored
// while it reads is in what it read or not, and was counted in neither
// (no longer pending): the client then wrote past its bound.
func TestAWriteStoredWhileTheClientIsWeighedStaysCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	creates := &gatedCreates{Store: memstore.New(), gate: make(chan struct{})}
	store := &gatedWeighs{gatedCreates: creates, read: make(chan struct{}), answer: make(chan struct{})}
	svc := memory.NewService(store, time.Hour, 50)
	svc.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	const unit = 64 << 10
	svc.LimitClients(16 * unit)
	text := func(n int) []memory.Turn { return exchange("q", strings.Repeat("x", n)) }
	create := func(n int) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "mallory", Turns: text(n)})
			done <- err
		}()
		return done
	}
	creates.open()
	store.pass() // the first weighing
	if err := <-create(6 * unit); err != nil {
		t.Fatal(err)
	}
	creates.close()
	first := create(5 * unit) // admitted by the count, held in the store
	creates.waitFor(t, 1)
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	second := create(6 * unit) // weighs: reads the store without the first
	<-store.read
	creates.open() // the first is stored while the weighing reads
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	close(store.answer)
	if err := <-second; !errors.Is(err, memory.ErrClientFull) {
		t.Errorf("a write weighed while another was stored: %v, want ErrClientFull (6 + 5 + 6 units of 16)", err)
	}
}

// gatedWeighs reads a client's threads when asked, and answers once told.
type gatedWeighs struct {
	*gatedCreates
	read, answer chan struct{}
	passed       bool
}

// pass lets the next weighing through at once.
func (g *gatedWeighs) pass() { g.passed = true }

func (g *gatedWeighs) ClientWeight(ctx context.Context, client string, now time.Time) (int64, error) {
	w, err := g.gatedCreates.ClientWeight(ctx, client, now)
	if g.passed {
		g.passed = false
		return w, err
	}
	g.read <- struct{}{}
	<-g.answer
	return w, err
}
