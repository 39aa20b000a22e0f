package memory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
)

func TestBranchSeesItsParentsHistory(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	root, _ := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange("q1", "a1")})
	branch, err := svc.Branch(ctx, root.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if branch.ParentID != root.ID || len(branch.Turns) != 0 || branch.ToolName != "chat" {
		t.Fatalf("branch = %+v", branch)
	}
	if _, err := svc.Append(ctx, branch.ID, "", memory.Exchange{}, exchange("q2", "a2"), nil); err != nil {
		t.Fatal(err)
	}
	sel, err := svc.SelectHistory(ctx, branch.ID, "", memory.SelectParams{Budget: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, turn := range sel.Turns {
		got = append(got, turn.Content)
	}
	if len(got) != 4 || got[0] != "q1" || got[3] != "a2" || sel.Total != 4 {
		t.Errorf("history = %v (total %d), want the parent's turns then the branch's", got, sel.Total)
	}
	// The root is unchanged by the branch's turns.
	again, _ := svc.Get(ctx, root.ID, "")
	if len(again.Turns) != 2 {
		t.Errorf("root has %d turns, want 2", len(again.Turns))
	}
	model, _ := svc.LastModel(ctx, branch)
	if model != "m" {
		t.Errorf("LastModel = %q, want m", model)
	}
}

func TestChainsStopAtCyclesAndDepth(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	a, b := uuid.NewString(), uuid.NewString()
	_, err := svc.Import(ctx, "", []*memory.Thread{
		{ID: a, ParentID: b, ToolName: "chat", Turns: exchange("from a", "x")},
		{ID: b, ParentID: a, ToolName: "chat", Turns: exchange("from b", "y")},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := svc.SelectHistory(ctx, a, "", memory.SelectParams{Budget: 10_000})
	if err != nil || sel.Total != 4 {
		t.Errorf("cycle: total %d, err %v; want both threads once", sel.Total, err)
	}

	parent := ""
	var last *memory.Thread
	for i := range memory.MaxChainDepth + 5 {
		th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ParentID: parent, Turns: exchange("q", "a")})
		if err != nil {
			t.Fatalf("link %d: %v", i, err)
		}
		parent, last = th.ID, th
	}
	chain, err := svc.Chain(ctx, last)
	if err != nil || len(chain) != memory.MaxChainDepth {
		t.Errorf("chain length %d (%v), want %d", len(chain), err, memory.MaxChainDepth)
	}
}

func TestListPagesAndRejectsForeignTokens(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	for range 5 {
		if _, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange("q", "a")}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	token := ""
	for pages := 0; ; pages++ {
		page, err := svc.List(ctx, "", "", 2, token)
		if err != nil {
			t.Fatal(err)
		}
		for _, sum := range page.Summaries {
			if seen[sum.Thread.ID] {
				t.Fatalf("thread %s listed twice", sum.Thread.ID)
			}
			seen[sum.Thread.ID] = true
		}
		if token = page.Next; token == "" {
			break
		}
		if pages > 5 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != 5 {
		t.Errorf("listed %d threads, want 5", len(seen))
	}
	for _, bad := range []string{"garbage", "MTIz"} {
		if _, err := svc.List(ctx, "", "", 2, bad); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("token %q: err = %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := svc.List(ctx, "", "", 500, ""); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("page_size 500: err = %v", err)
	}
}

func TestImportValidatesEveryThreadFirst(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 4)
	good := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", Turns: exchange("q", "a")}
	for name, bad := range map[string]*memory.Thread{
		"id":    {ID: "nope", ToolName: "chat"},
		"tool":  {ID: uuid.NewString()},
		"turns": {ID: uuid.NewString(), ToolName: "chat", Turns: append(append(exchange("1", "2"), exchange("3", "4")...), exchange("5", "6")...)},
		"role":  {ID: uuid.NewString(), ToolName: "chat", Turns: []memory.Turn{{Content: "x"}}},
	} {
		if _, err := svc.Import(ctx, "", []*memory.Thread{good, bad}, false); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := svc.Get(ctx, good.ID, ""); !errors.Is(err, memory.ErrNotFound) {
		t.Error("a rejected import stored its valid thread")
	}
}

// TestImportIsBounded: an import is written whole while every other write
// waits, so its threads, turns and the files they name are bounded, each
// refused with what to do; 1,000 threads of 1,500 file refs each held
// another client's chat for 3.5 s.
func TestImportIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 100)
	threads := func(n, turns, files int) []*memory.Thread {
		out := make([]*memory.Thread, n)
		for i := range out {
			out[i] = &memory.Thread{ID: uuid.NewString(), ToolName: "chat"}
			for j := range turns {
				turn := memory.Turn{Role: memory.RoleUser, Content: "q"}
				for k := range files {
					turn.Files = append(turn.Files, memory.FileRef{Path: fmt.Sprintf("/f/%d/%d/%d", i, j, k)})
				}
				out[i].Turns = append(out[i].Turns, turn)
			}
		}
		return out
	}
	for name, tc := range map[string]struct {
		threads []*memory.Thread
		want    string
	}{
		"threads": {threads(memory.MaxImportThreads+1, 0, 0), "threads"},
		"turns":   {threads(memory.MaxImportTurns/100+1, 100, 0), "turns"},
		"files":   {threads(2, 1, memory.MaxImportFiles/2+1), "files"},
	} {
		_, err := svc.Import(ctx, "me", tc.threads, false)
		if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), tc.want) ||
			!strings.Contains(err.Error(), "split it") {
			t.Errorf("too many %s: err = %v, want ErrInvalid naming them", name, err)
		}
	}
	if _, err := svc.Import(ctx, "me", threads(memory.MaxImportTurns/100, 100, 0), false); err != nil {
		t.Errorf("an import at the turns' bound: %v", err)
	}
}

// A parent link to another client's thread, however it came to be (here
// written straight to the store, as an older import could), never shows
// that client's turns: not in the history, not as the model to inherit.
func TestChainsNeverCrossOwners(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	svc := memory.NewService(store, time.Hour, 50)
	victim, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "bob",
		Turns: append(exchange("bob's secret plan", "noted"), memory.Turn{Role: memory.RoleAssistant,
			Content: "x", ModelName: "bobs-model"})})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	forged := &memory.Thread{ID: uuid.NewString(), ParentID: victim.ID, ToolName: "chat", ClientID: "mallory",
		CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Turns: exchange("mine", "ok")}
	if err := store.Import(ctx, []*memory.Thread{forged}, false, now); err != nil {
		t.Fatal(err)
	}
	sel, err := svc.SelectHistory(ctx, forged.ID, "mallory", memory.SelectParams{Budget: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	for _, turn := range sel.Turns {
		if turn.Content == "bob's secret plan" {
			t.Fatal("mallory's history holds bob's turn")
		}
	}
	if sel.Total != 2 {
		t.Errorf("history counts %d turns, want mallory's 2", sel.Total)
	}
	if model, _ := svc.LastModel(ctx, forged); model == "bobs-model" {
		t.Errorf("LastModel = %q: bob's model leaked through the chain", model)
	}
}

func TestImportRefusesAnotherClientsParentAndID(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	victim, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "bob", Turns: exchange("q", "a")})
	if err != nil {
		t.Fatal(err)
	}
	child := &memory.Thread{ID: uuid.NewString(), ParentID: victim.ID, ToolName: "chat", Turns: exchange("m", "n")}
	if _, err := svc.Import(ctx, "mallory", []*memory.Thread{child}, false); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("import under bob's parent: %v, want ErrInvalid", err)
	}
	// The id in upper case, braced or as a URN is the same thread: it
	// was stored as another, and passed the parent's check.
	for _, spelling := range []string{strings.ToUpper(victim.ID), "{" + victim.ID + "}", "urn:uuid:" + victim.ID} {
		child := &memory.Thread{ID: uuid.NewString(), ParentID: spelling, ToolName: "chat", Turns: exchange("m", "n")}
		if _, err := svc.Import(ctx, "mallory", []*memory.Thread{child}, false); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("import under bob's parent spelt %s: %v, want ErrInvalid", spelling, err)
		}
		takeover := &memory.Thread{ID: spelling, ToolName: "chat", Turns: exchange("m", "n")}
		if _, err := svc.Import(ctx, "mallory", []*memory.Thread{takeover}, true); !errors.Is(err, memory.ErrOwned) {
			t.Errorf("import over bob's thread spelt %s: %v, want ErrOwned", spelling, err)
		}
	}
	takeover := &memory.Thread{ID: victim.ID, ToolName: "chat", ClientID: "mallory", Turns: exchange("m", "n")}
	if _, err := svc.Import(ctx, "mallory", []*memory.Thread{takeover}, true); !errors.Is(err, memory.ErrOwned) {
		t.Errorf("import over bob's thread: %v, want ErrOwned", err)
	}
	// The export's client_id is never believed: an import is the importer's.
	own := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", ClientID: "bob", Turns: exchange("m", "n")}
	if _, err := svc.Import(ctx, "mallory", []*memory.Thread{own}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, own.ID, "bob"); !errors.Is(err, memory.ErrNotFound) {
		t.Error("an import naming bob as owner gave bob a thread")
	}
	got, err := svc.Get(ctx, victim.ID, "bob")
	if err != nil || len(got.Turns) != 2 || got.Turns[0].Content != "q" {
		t.Errorf("bob's thread after the attempts: %+v, %v", got, err)
	}
}

// Times before 1970 are refused: a store keeps a thread's times as Unix
// nanoseconds, which wrap before 1678, and a thread dated 1500 was listed
// as of 2084, its page's cursor pointing back at itself: paging never
// ended, and an export never answered.
func TestAnImportDatedBefore1970IsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	old := time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, th := range map[string]*memory.Thread{
		"updated": {ID: uuid.NewString(), ToolName: "chat", CreatedAt: time.Now(), UpdatedAt: old},
		"created": {ID: uuid.NewString(), ToolName: "chat", CreatedAt: old, UpdatedAt: time.Now()},
	} {
		if _, err := svc.Import(ctx, "me", []*memory.Thread{th}, false); !errors.Is(err, memory.ErrInvalid) ||
			!strings.Contains(err.Error(), "1970") {
			t.Errorf("a thread %s in 1500: %v; want it refused, naming 1970", name, err)
		}
	}
}

// Times an export gives ahead of this clock are now: a thread last updated
// ahead of it sorts as updated now, not as when it was created.
func TestAnImportsTimesAheadOfTheClockAreNow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := memstore.New()
	svc := memory.NewService(store, time.Hour, 50)
	before := time.Now()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: before.Add(-30 * 24 * time.Hour),
		UpdatedAt: before.Add(2 * time.Hour)}
	if _, err := svc.Import(ctx, "me", []*memory.Thread{th}, false); err != nil {
		t.Fatal(err)
	}
	got, err := store.Get(ctx, th.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got.UpdatedAt.Before(before) || got.UpdatedAt.After(time.Now()) {
		t.Errorf("a thread last updated 2 hours ahead is stored as updated at %v; want now (%v)", got.UpdatedAt, before)
	}
}
