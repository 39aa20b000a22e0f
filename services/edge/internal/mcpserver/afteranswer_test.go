package mcpserver

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAfterAnswerKeepsOrderAndLosesNothing: work left before Run is done
// by Run, in order; work left after it, and without an AfterAnswer, at
// once.
func TestAfterAnswerKeepsOrderAndLosesNothing(t *testing.T) {
	t.Parallel()
	var done []string
	leave := func(ctx context.Context, name string) {
		DoAfterAnswer(ctx, func() { done = append(done, name) })
	}
	leave(t.Context(), "without one")
	ctx, after := WithAfterAnswer(t.Context())
	leave(ctx, "first")
	leave(ctx, "second")
	if diff := cmp.Diff([]string{"without one"}, done); diff != "" {
		t.Errorf("before Run (-want +got):\n%s", diff)
	}
	after.Run()
	leave(ctx, "late")
	after.Run() // nothing left twice
	if diff := cmp.Diff([]string{"without one", "first", "second", "late"}, done); diff != "" {
		t.Errorf("done (-want +got):\n%s", diff)
	}
}
