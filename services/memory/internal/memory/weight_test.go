package memory_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
)

// heavyExchange is an exchange whose answer keeps a workflow state of
// almost memory.MaxValues values: a few tens of kilobytes as JSON, but
// each value a map entry or more to every reader that decodes it.
func heavyExchange() []memory.Turn {
	findings := make([]any, memory.MaxValues-10)
	for i := range findings {
		findings[i] = float64(i % 10)
	}
	turns := exchange("next step", "done")
	turns[0].ToolName, turns[1].ToolName = "codereview", "codereview"
	turns[1].WorkflowState = map[string]any{"findings": findings}
	return turns
}

// A thread holds at most memory.MaxThreadWeight, its values counted at
// what they cost a reader: 50 turns of states as wide as MaxValues let
// allowed one read of a thread 0.9 GB.
func TestAThreadIsKeptWithinItsWeight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, be := range append(backends(), backend{"memstore", func(testing.TB) memory.Store { return memstore.New() }}) {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			svc := memory.NewService(be.open(t), time.Hour, 200)
			th, err := svc.Create(ctx, memory.CreateParams{ToolName: "codereview", ClientID: "alice",
				Turns: heavyExchange()})
			if err != nil {
				t.Fatal(err)
			}
			count := 2
			for count < 200 {
				n, err := svc.Append(ctx, th.ID, "alice", memory.Exchange{ID: uuid.NewString()}, heavyExchange(), nil)
				if errors.Is(err, memory.ErrThreadFull) {
					if n != count {
						t.Errorf("the refused append answers %d turns, want %d", n, count)
					}
					for _, want := range []string{"new conversation", "MiB", "this exchange (1.9 MiB)"} {
						if !strings.Contains(err.Error(), want) {
							t.Errorf("the refusal %q does not say %q", err, want)
						}
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				count = n
			}
			// 20,000 values of a hundred bytes each: 2 MB an exchange.
			if count < 10 || count > 40 {
				t.Errorf("the thread took %d turns of states of %d values before it was full, want 10 to 40",
					count, memory.MaxValues)
			}
			got, err := svc.Get(ctx, th.ID, "alice")
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Turns) != count {
				t.Errorf("the full thread holds %d turns, want %d", len(got.Turns), count)
			}
		})
	}
}

// A thread created or imported whole is weighed as an append's turns are.
func TestAThreadPastItsWeightIsNotCreated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 200)
	var turns []memory.Turn
	for range 40 {
		turns = append(turns, heavyExchange()...)
	}
	_, err := svc.Create(ctx, memory.CreateParams{ToolName: "codereview", Turns: turns})
	if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "MiB") {
		t.Errorf("create: %v, want ErrInvalid saying the bound", err)
	}
	_, err = svc.Import(ctx, "", []*memory.Thread{{ID: uuid.NewString(), ToolName: "codereview", Turns: turns}},
		false)
	if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "MiB") {
		t.Errorf("import: %v, want ErrInvalid saying the bound", err)
	}
}

// getsCounted is a store that counts the reads of each thread.
type getsCounted struct {
	memory.Store
	mu   sync.Mutex
	gets map[string]int
}

func (s *getsCounted) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	s.mu.Lock()
	s.gets[id]++
	s.mu.Unlock()
	return s.Store.Get(ctx, id, now)
}

// A read follows a thread's ancestors while they weigh at most
// MaxChainWeight together, and weighs each before it reads it: every
// thread may weigh MaxThreadWeight, and 20 imported threads, each the
// parent of the next, took one read 673 MB.
func TestAChainIsReadWithinItsWeight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &getsCounted{Store: memstore.New(), gets: map[string]int{}}
	svc := memory.NewService(store, time.Hour, 200)
	var turns []memory.Turn
	for range 14 { // 28 MB each: two fit in the chain's weight, three do not
		turns = append(turns, heavyExchange()...)
	}
	ids := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
	var threads []*memory.Thread
	for i, id := range ids {
		th := &memory.Thread{ID: id, ToolName: "codereview", Turns: turns}
		if i > 0 {
			th.ParentID = ids[i-1]
		}
		threads = append(threads, th)
	}
	if _, err := svc.Import(ctx, "alice", threads, false); err != nil {
		t.Fatal(err)
	}
	leaf, err := svc.Get(ctx, ids[2], "alice")
	if err != nil {
		t.Fatal(err)
	}
	chain, err := svc.Chain(ctx, leaf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, th := range chain {
		got = append(got, th.ID)
	}
	if diff := cmp.Diff(ids[1:], got); diff != "" {
		t.Errorf("the chain read (-want +got):\n%s", diff)
	}
	if n := store.gets[ids[0]]; n != 0 {
		t.Errorf("the ancestor past the chain's weight was read %d times, want none", n)
	}
	if _, err := svc.Prepare(ctx, ids[2], "alice", "codereview", nil); err != nil {
		t.Fatal(err)
	}
	if n := store.gets[ids[0]]; n != 0 {
		t.Errorf("Prepare read the ancestor past the chain's weight %d times, want none", n)
	}
}

// content is a user's turn of text.
func content(text string) memory.Turn { return memory.Turn{Role: memory.RoleUser, Content: text} }

// Text is weighed as the stores write it: a control character takes six
// bytes as JSON, and a '<' one (it took six, escaped for HTML).
func TestTextIsWeighedAsItIsStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	const n = 10_000
	for _, c := range []struct {
		name     string
		turn     func(text string) memory.Turn
		text     string
		min, max int64
	}{
		{"control characters", content, strings.Repeat("\x01", n), 6 * n, 6*n + 1000},
		{"markup", content, strings.Repeat("<", n), n, n + 1000},
		{"an image's control characters", func(s string) memory.Turn {
			return memory.Turn{Role: memory.RoleUser, Images: []string{s}}
		}, strings.Repeat("\x01", n), 6 * n, 6*n + 1000},
		{"a file path's control characters", func(s string) memory.Turn {
			return memory.Turn{Role: memory.RoleUser, Files: []memory.FileRef{{Path: s}}}
		}, strings.Repeat("\x01", n), 6 * n, 6*n + 1000},
		{"markup in a workflow state", func(s string) memory.Turn {
			return memory.Turn{Role: memory.RoleUser, WorkflowState: map[string]any{"findings": s}}
		}, strings.Repeat("<&>", n/3), n, n + 1000},
	} {
		turns := []memory.Turn{c.turn(c.text), {Role: memory.RoleAssistant, Content: "a"}}
		th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turns})
		if err != nil {
			t.Fatal(err)
		}
		got, err := svc.Get(ctx, th.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if got.Weight < c.min || got.Weight > c.max {
			t.Errorf("%s: a thread of %d such bytes weighs %d, want %d to %d", c.name, len(c.text), got.Weight,
				c.min, c.max)
		}
	}
}

// An import checks each parent outside it once, by its owner alone: it
// read the parent whole for each thread that named it, and an import of a
// thousand one-turn threads read a 31 MiB parent a thousand times (56 s).
func TestAnImportChecksEachParentByItsOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &getsCounted{Store: memstore.New(), gets: map[string]int{}}
	svc := memory.NewService(store, time.Hour, 50)
	parent := uuid.NewString()
	if _, err := svc.Import(ctx, "alice", []*memory.Thread{{ID: parent, ToolName: "chat",
		Turns: exchange("q", "a")}}, false); err != nil {
		t.Fatal(err)
	}
	var children []*memory.Thread
	for range 50 {
		children = append(children, &memory.Thread{ID: uuid.NewString(), ParentID: parent, ToolName: "chat",
			Turns: exchange("q", "a")})
	}
	if _, err := svc.Import(ctx, "alice", children, false); err != nil {
		t.Fatal(err)
	}
	if n := store.gets[parent]; n != 0 {
		t.Errorf("the import read the parent %d times, want none", n)
	}
	_, err := svc.Import(ctx, "mallory", []*memory.Thread{{ID: uuid.NewString(), ParentID: parent, ToolName: "chat",
		Turns: exchange("q", "a")}}, false)
	if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "not one of your threads") {
		t.Errorf("mallory's import naming alice's thread as parent: %v, want it refused", err)
	}
	if n := store.gets[parent]; n != 0 {
		t.Errorf("mallory's import read alice's thread %d times, want none", n)
	}
}
