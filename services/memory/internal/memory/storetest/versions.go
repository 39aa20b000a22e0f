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

// runVersions checks that a read while the other handle writes the thread
// anew again and again returns one version of it, its head and its turns
// alike: a store that reads them apart must see that they disagree.
func runVersions(t *testing.T, newPair func(t *testing.T) (reader, writer memory.Store)) {
	t.Run("a read while the thread is written anew reads one version of it", func(t *testing.T) {
		r, w := newPair(t)
		ctx := context.Background()
		id := uuid.NewString()
		if err := w.Create(ctx, generation(id, 0, 20)); err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		replaced := make(chan error, 1)
		go func() {
			for gen := 1; !stop.Load(); gen++ {
				// 18 to 22 turns: one version's count reads another's turns.
				if err := w.Import(ctx, []*memory.Thread{generation(id, gen, 18+gen%5)}, true); err != nil {
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
		deadline := time.Now().Add(time.Second)
		reads, unavailable := 0, 0
		for ; time.Now().Before(deadline); reads++ {
			got, err := r.Get(ctx, id, base)
			if errors.Is(err, memory.ErrUnavailable) {
				unavailable++ // a store may give up on a thread written anew through every attempt
				continue
			}
			if err != nil {
				t.Fatalf("read %d: %v", reads, err)
			}
			for i, turn := range got.Turns {
				if turn.Content != got.ParentID {
					t.Fatalf("read %d: the head of %s, turn %d of %s (of %d turns)", reads, got.ParentID, i,
						turn.Content, len(got.Turns))
				}
			}
		}
		if unavailable > reads/100 {
			t.Errorf("%d of %d reads gave up", unavailable, reads)
		}
	})
}
