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
					for _, want := range []string{"new conversation", "MiB"} {
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
