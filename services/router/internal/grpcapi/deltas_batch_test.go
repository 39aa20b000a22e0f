package grpcapi

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDeltaBatchHoldsTextUntilADeltaIsDue: chunks that come within the
// interval are held, the first chunk after it goes out with all of them,
// and text still held when the reply ends is never sent as a delta.
func TestDeltaBatchHoldsTextUntilADeltaIsDue(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := deltaBatch{every: 200 * time.Millisecond, last: time.Now()}
		var sent []string
		chunk := func(after time.Duration, text string) {
			time.Sleep(after)
			if delta, due := b.add(text); due {
				sent = append(sent, delta)
			}
		}
		chunk(0, "a ")
		chunk(50*time.Millisecond, "b ")
		chunk(200*time.Millisecond, "c ") // 250 ms since the start: due
		chunk(10*time.Millisecond, "d ")
		chunk(300*time.Millisecond, "e ") // due again: goes out with d
		chunk(100*time.Millisecond, "f")  // held when the reply ends
		if diff := cmp.Diff([]string{"a b c ", "d e "}, sent); diff != "" {
			t.Errorf("deltas sent (-want +got):\n%s", diff)
		}
	})
}
