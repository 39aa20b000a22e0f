// Package storetest is the conformance suite every memory.Store passes.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// Run runs the suite against stores made by newStore, one per subtest.
func Run(t *testing.T, newStore func(t *testing.T) memory.Store) {
	ctx := context.Background()
	thread := func() *memory.Thread {
		return &memory.Thread{
			ID: uuid.NewString(), CreatedAt: base, UpdatedAt: base, ExpiresAt: base.Add(time.Hour),
			ToolName: "chat", InitialContext: map[string]any{"prompt": "hi"},
		}
	}
	turn := func(role memory.Role, content string) memory.Turn {
		return memory.Turn{Role: role, Content: content, Timestamp: base, ToolName: "chat",
			Files: []memory.FileRef{{Path: "/a.go", SHA256: "ab", Size: 2}}}
	}

	t.Run("create then get returns the same thread", func(t *testing.T) {
		s := newStore(t)
		want := thread()
		want.Turns = []memory.Turn{turn(memory.RoleUser, "q"), turn(memory.RoleAssistant, "a")}
		if err := s.Create(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, want.ID, base)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != want.ID || len(got.Turns) != 2 || got.Turns[1].Content != "a" || got.Turns[0].Files[0].SHA256 != "ab" ||
			got.InitialContext["prompt"] != "hi" || !got.ExpiresAt.Equal(want.ExpiresAt) {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})

	t.Run("unknown and expired threads are not found", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.Get(ctx, uuid.NewString(), base); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("unknown: err = %v, want ErrNotFound", err)
		}
		th := thread()
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, th.ID, base.Add(time.Hour)); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("expired: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("append refreshes the expiry and respects the limit", func(t *testing.T) {
		s := newStore(t)
		th := thread()
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		later := base.Add(50 * time.Minute)
		first := []memory.Turn{turn(memory.RoleUser, "1"), turn(memory.RoleAssistant, "2")}
		n, err := s.Append(ctx, th.ID, "", memory.Exchange{}, first, 3, later, later.Add(time.Hour))
		if err != nil || n != 2 {
			t.Fatalf("Append = %d, %v; want 2, nil", n, err)
		}
		if _, err := s.Get(ctx, th.ID, base.Add(90*time.Minute)); err != nil {
			t.Errorf("after refresh: %v", err)
		}
		second := []memory.Turn{turn(memory.RoleUser, "3"), turn(memory.RoleAssistant, "4")}
		_, err = s.Append(ctx, th.ID, "", memory.Exchange{}, second, 3, later, later.Add(time.Hour))
		if !errors.Is(err, memory.ErrTurnLimit) {
			t.Errorf("past the limit: err = %v, want ErrTurnLimit", err)
		}
		got, _ := s.Get(ctx, th.ID, later)
		if len(got.Turns) != 2 {
			t.Errorf("a rejected append stored turns: have %d, want 2", len(got.Turns))
		}
	})

	t.Run("concurrent appends keep every exchange", func(t *testing.T) {
		s := newStore(t)
		th := thread()
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		const writers = 100
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				turns := []memory.Turn{turn(memory.RoleUser, fmt.Sprint("q", i)), turn(memory.RoleAssistant, fmt.Sprint("a", i))}
				if _, err := s.Append(ctx, th.ID, "", memory.Exchange{}, turns, 1000, base,
					base.Add(time.Hour)); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		got, err := s.Get(ctx, th.ID, base)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Turns) != 2*writers {
			t.Fatalf("have %d turns, want %d", len(got.Turns), 2*writers)
		}
		for i := 0; i < len(got.Turns); i += 2 {
			if got.Turns[i].Role != memory.RoleUser || got.Turns[i+1].Role != memory.RoleAssistant ||
				got.Turns[i].Content[1:] != got.Turns[i+1].Content[1:] {
				t.Fatalf("exchange at %d interleaved: %q then %q", i, got.Turns[i].Content, got.Turns[i+1].Content)
			}
		}
	})

	t.Run("list pages newest first and filters", func(t *testing.T) {
		s := newStore(t)
		var ids []string
		for i := range 5 {
			th := thread()
			th.UpdatedAt = base.Add(time.Duration(i) * time.Minute)
			if i == 2 {
				th.ToolName = "debug"
			}
			if i == 3 {
				th.ClientID = "someone-else"
			}
			if i == 4 {
				th.ExpiresAt = base.Add(time.Minute) // expired by the time we list
			}
			if err := s.Create(ctx, th); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, th.ID)
		}
		now := base.Add(30 * time.Minute)
		page, err := s.Summaries(ctx, memory.ListParams{Limit: 2}, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 2 || page[0].Thread.ID != ids[2] || page[1].Thread.ID != ids[1] {
			t.Fatalf("first page = %v, want threads 2 and 1", threadIDs(page))
		}
		last := page[1].Thread
		rest, err := s.Summaries(ctx, memory.ListParams{Limit: 10, After: &memory.Cursor{UpdatedAt: last.UpdatedAt,
			ID: last.ID}}, now)
		if err != nil || len(rest) != 1 || rest[0].Thread.ID != ids[0] {
			t.Errorf("second page = %v (%v), want thread 0", threadIDs(rest), err)
		}
		debug, _ := s.Summaries(ctx, memory.ListParams{Limit: 10, ToolName: "debug"}, now)
		if len(debug) != 1 || debug[0].Thread.ID != ids[2] {
			t.Errorf("tool filter = %v", threadIDs(debug))
		}
		other, _ := s.Summaries(ctx, memory.ListParams{Limit: 10, ClientID: "someone-else"}, now)
		if len(other) != 1 || other[0].Thread.ID != ids[3] {
			t.Errorf("client filter = %v", threadIDs(other))
		}
	})

	t.Run("delete", func(t *testing.T) {
		s := newStore(t)
		th := thread()
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, th.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, th.ID, base); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
		if err := s.Delete(ctx, th.ID); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("second delete: %v, want ErrNotFound", err)
		}
	})

	t.Run("import is all or none", func(t *testing.T) {
		s := newStore(t)
		existing := thread()
		if err := s.Create(ctx, existing); err != nil {
			t.Fatal(err)
		}
		fresh := thread()
		clash := *existing
		clash.ToolName = "imported"
		if err := s.Import(ctx, []*memory.Thread{fresh, &clash}, false, base); !errors.Is(err, memory.ErrExists) {
			t.Fatalf("import over an existing thread: %v, want ErrExists", err)
		}
		if _, err := s.Get(ctx, fresh.ID, base); !errors.Is(err, memory.ErrNotFound) {
			t.Error("a failed import stored a thread")
		}
		if err := s.Import(ctx, []*memory.Thread{fresh, &clash}, true, base); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, existing.ID, base)
		if err != nil || got.ToolName != "imported" {
			t.Errorf("replace: %v %v", got, err)
		}
		if _, err := s.Get(ctx, fresh.ID, base); err != nil {
			t.Errorf("imported thread: %v", err)
		}
	})

	t.Run("import never replaces another client's thread", func(t *testing.T) {
		s := newStore(t)
		victim := thread()
		victim.ClientID = "bob"
		victim.Turns = []memory.Turn{turn(memory.RoleUser, "bob's question"), turn(memory.RoleAssistant, "bob's answer")}
		if err := s.Create(ctx, victim); err != nil {
			t.Fatal(err)
		}
		fresh := thread()
		fresh.ClientID = "mallory"
		takeover := *victim
		takeover.ClientID, takeover.ToolName, takeover.Turns = "mallory", "imported", nil
		for _, replace := range []bool{false, true} {
			err := s.Import(ctx, []*memory.Thread{fresh, &takeover}, replace, base)
			if !errors.Is(err, memory.ErrOwned) {
				t.Fatalf("import (replace %v) over another client's thread: %v, want ErrOwned", replace, err)
			}
		}
		got, err := s.Get(ctx, victim.ID, base)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(victim, got, cmpopts.EquateApproxTime(time.Millisecond), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("the victim's thread changed (-before +after):\n%s", diff)
		}
		if _, err := s.Get(ctx, fresh.ID, base); !errors.Is(err, memory.ErrNotFound) {
			t.Error("a refused import stored a thread")
		}
	})

	t.Run("blobs are stored once and live as long as their threads", func(t *testing.T) {
		s := newStore(t)
		a := memory.Blob{SHA256: "aa", Content: "package a\n", Tokens: map[string]int64{"estimate": 4}}
		b := memory.Blob{SHA256: "bb", Content: ""}
		if err := s.SaveBlobs(ctx, []memory.Blob{a, b}, base, base.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetBlobs(ctx, []string{"aa", "bb", "missing"}, base)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["aa"].Content != a.Content || got["aa"].Tokens["estimate"] != 4 || got["bb"].Content != "" {
			t.Fatalf("got %+v", got)
		}
		// Saving again with an earlier expiry does not shorten it.
		if err := s.SaveBlobs(ctx, []memory.Blob{a}, base, base.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		// A thread that references bb keeps it alive with every append.
		th := thread()
		th.Turns = []memory.Turn{{Role: memory.RoleUser, Content: "q", Files: []memory.FileRef{{Path: "/b", SHA256: "bb"}}}}
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		later := base.Add(50 * time.Minute)
		answer := []memory.Turn{{Role: memory.RoleAssistant, Content: "a"}}
		if _, err := s.Append(ctx, th.ID, "", memory.Exchange{}, answer, 10, later, later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		after, err := s.GetBlobs(ctx, []string{"aa", "bb"}, base.Add(90*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := after["aa"]; ok {
			t.Error("blob aa outlived its hour")
		}
		if _, ok := after["bb"]; !ok {
			t.Error("blob bb expired while its thread lives")
		}
	})

	t.Run("a blob's head is its length and counts, without its content", func(t *testing.T) {
		s := newStore(t)
		a := memory.Blob{SHA256: "aa", Content: "package é\n", Tokens: map[string]int64{"o200k_base": 4}}
		b := memory.Blob{SHA256: "bb", Content: ""}
		if err := s.SaveBlobs(ctx, []memory.Blob{a, b}, base, base.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err := s.BlobHeads(ctx, []string{"aa", "bb", "missing"}, base)
		if err != nil {
			t.Fatal(err)
		}
		// The length is in bytes: é takes two.
		want := map[string]memory.BlobHead{"aa": {Bytes: 11, Tokens: a.Tokens}, "bb": {Bytes: 0}}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("heads (-want +got):\n%s", diff)
		}
		if got, err := s.BlobHeads(ctx, []string{"aa"}, base.Add(time.Hour)); err != nil || len(got) != 0 {
			t.Errorf("the heads of expired blobs: %v, %v; want none", got, err)
		}
		if got, err := s.BlobHeads(ctx, nil, base); err != nil || len(got) != 0 {
			t.Errorf("the heads of no blobs: %v, %v; want none", got, err)
		}
	})

	t.Run("append is for the thread's own client", func(t *testing.T) {
		s := newStore(t)
		th := thread()
		th.ClientID = "alice"
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		turn := []memory.Turn{{Role: memory.RoleUser, Content: "q"}}
		_, err := s.Append(ctx, th.ID, "bob", memory.Exchange{}, turn, 10, base, base.Add(time.Hour))
		if !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("another client's append: err = %v, want ErrNotFound", err)
		}
		if n, err := s.Append(ctx, th.ID, "alice", memory.Exchange{}, turn, 10, base,
			base.Add(time.Hour)); err != nil || n != 1 {
			t.Errorf("owner's append: %d, %v", n, err)
		}
	})

	t.Run("a caller cannot change stored turns", func(t *testing.T) {
		s := newStore(t)
		th := thread()
		th.Turns = []memory.Turn{turn(memory.RoleUser, "q")}
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		got, _ := s.Get(ctx, th.ID, base)
		got.Turns[0].Content = "changed"
		again, _ := s.Get(ctx, th.ID, base)
		if again.Turns[0].Content != "q" {
			t.Errorf("stored turn changed to %q", again.Turns[0].Content)
		}
	})

	runExchanges(t, newStore)
	runUnchanged(t, newStore)
	runSummaries(t, newStore)
	runReads(t, newStore)
	runContent(t, newStore)
	runWeight(t, newStore)
	runClientWeight(t, newStore)
	runHead(t, newStore)
}

func threadIDs(sums []memory.Summary) []string {
	out := make([]string, len(sums))
	for i, s := range sums {
		out[i] = s.Thread.ID
	}
	return out
}
