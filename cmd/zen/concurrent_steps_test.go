package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestConcurrentStepsOfAWorkflowLoseNone: steps of one workflow sent at
// once on its thread were each stored, each on the state it was prepared
// with, and the last stored hid the others' findings from every later
// step. Now a step is stored only on the state it was prepared with; one
// that another step overtook says it was not saved, and the findings of
// every step answered as saved reach the steps after.
func TestConcurrentStepsOfAWorkflowLoseNone(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	// The expert answers slowly: the steps run side by side.
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: `{"status": "analysis_complete", "summary": "agreed"}`,
			Delay: 300 * time.Millisecond}
	})
	st := serveStack(t, fakeEnv(fake))
	step := func(n int, next bool, cont string) map[string]any {
		args := map[string]any{"step": "look again", "step_number": n, "total_steps": 9, "next_step_required": next,
			"findings": fmt.Sprintf("finding number %d", n), "confidence": "high", "model": "llama3.2"}
		if cont != "" {
			args["continuation_id"] = cont
		}
		_, got := callTool(t, st.session, "thinkdeep", args)
		return got
	}
	first := step(1, true, "")
	cont, _ := first["continuation_id"].(string)
	if cont == "" {
		t.Fatalf("step 1 started no thread: %.600v", first)
	}
	saved := make([]bool, 9)
	var wg sync.WaitGroup
	for n := 2; n <= 6; n++ {
		wg.Go(func() {
			got := step(n, false, cont)
			meta, _ := got["metadata"].(map[string]any)
			failure, _ := meta["continuation_error"].(string)
			saved[n] = failure == ""
			next, _ := got["next_steps"].(string)
			if !saved[n] && (!strings.Contains(failure, "another step") || next != failure) {
				t.Errorf("step %d was not saved, saying %q, next steps %q; want both to say another step came "+
					"first", n, failure, next)
			}
		})
	}
	wg.Wait()
	last := fmt.Sprint(step(7, false, cont))
	stored := 0
	for n := 2; n <= 6; n++ {
		if !saved[n] {
			continue
		}
		stored++
		if !strings.Contains(last, fmt.Sprintf("finding number %d", n)) {
			t.Errorf("step %d was answered as saved, and the step after knows nothing of it", n)
		}
	}
	if stored != 1 {
		// Side by side, one is stored and the others overtaken; none
		// refused would mean the steps did not run side by side.
		t.Errorf("steps saved %v; want one of the five", saved[2:7])
	}
}
