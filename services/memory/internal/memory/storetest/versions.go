package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// generation is a thread whose head and turns all name gen, with n turns.
func generation(id string, gen, n int) *memory.Thread {
	th := &memory.Thread{ID: id, ToolName: "chat", ParentID: fmt.Sprint("gen ", gen), CreatedAt: base,
		UpdatedAt: base, ExpiresAt: base.Add(time.Hour)}
	for range n {
		th.Turns = append(th.Turns, memory.Turn{Role: memory.RoleUser, Content: fmt.Sprint("gen ", gen)})
	}
	return th
}

// turnsOf is how many turns generation gen has: 20 to 24, so that one
// version's count reads another's turns.
func turnsOf(gen int) int { return 20 + gen%5 }

// runVersions checks that a read while the other handle writes the thread
// anew again and again returns one version of it, its head and its turns
// alike: a store that reads them apart must see that they disagree.
func runVersions(t *testing.T, newPair func(t *testing.T) (reader, writer memory.Store)) {
	t.Run("a read while the thread is written anew reads one version of it", func(t *testing.T) {
		r, w := newPair(t)
		ctx := context.Background()
		id := uuid.NewString()
		if err := w.Create(ctx, generation(id, 0, turnsOf(0))); err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		replaced := make(chan error, 1)
		go func() {
			for gen := 1; !stop.Load(); gen++ {
				next := []*memory.Thread{generation(id, gen, turnsOf(gen))}
				if err := w.Import(ctx, next, true, base); err != nil {
					replaced <- err
					return
				}
			}
			replaced <- nil
		}()
		defer func() {
			stop.Store(true)
			if err := <-replaced; err != nil {
				t.Fatal(err)
			}
		}()
		deadline := time.Now().Add(300 * time.Millisecond)
		reads, unavailable := 0, 0
		for ; time.Now().Before(deadline); reads++ {
			got, err := readOneWay(ctx, r, id, reads%2)
			if errors.Is(err, memory.ErrUnavailable) {
				unavailable++ // a store may give up on a thread written anew through every attempt
				continue
			}
			if err != nil {
				t.Fatalf("read %d: %v", reads, err)
			}
			var gen int
			if _, err := fmt.Sscanf(got.ParentID, "gen %d", &gen); err != nil {
				t.Fatalf("read %d: head %q: %v", reads, got.ParentID, err)
			}
			if want := turnsOf(gen); got.count != want {
				t.Fatalf("read %d (%s): the head of %s with %d turns, want %d", reads, got.how, got.ParentID,
					got.count, want)
			}
			for i, turn := range got.Turns {
				if turn.Content != got.ParentID {
					t.Fatalf("read %d (%s): the head of %s, turn %d of %s", reads, got.how, got.ParentID, i,
						turn.Content)
				}
			}
		}
		if unavailable > reads/100 {
			t.Errorf("%d of %d reads gave up", unavailable, reads)
		}
	})
}

// oneWay is a thread read one of two ways, with its turn count.
type oneWay struct {
	*memory.Thread
	count int
	how   string
}

// readOneWay reads the thread by Get or Summaries (the first
// prompt standing for its turns).
func readOneWay(ctx context.Context, s memory.Store, id string, way int) (oneWay, error) {
	switch way {
	case 0:
		t, err := s.Get(ctx, id, base)
		if err != nil {
			return oneWay{}, err
		}
		return oneWay{t, len(t.Turns), "read"}, nil
	default:
		sums, err := s.Summaries(ctx, memory.ListParams{Limit: 10}, base)
		if err != nil {
			return oneWay{}, err
		}
		for _, sum := range sums {
			if sum.Thread.ID == id {
				t := sum.Thread
				t.Turns = []memory.Turn{{Content: sum.FirstPrompt}}
				return oneWay{&t, sum.TurnCount, "summarised"}, nil
			}
		}
	}
	return oneWay{}, fmt.Errorf("thread %s is not listed", id)
}
