package serve

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Every task runs, across the task a worker ends on, and a worker left
// idle ends: synctest fails a test whose goroutines outlive it.
func TestWorkersRunEveryTaskAndEndWhenIdle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &workers{tasks: make(chan func())}
		const n = workerTasks + 10 // past the task the first worker ends on
		ran := 0
		for range n {
			var done sync.WaitGroup
			done.Add(1)
			w.run(func() { ran++; done.Done() })
			done.Wait()
			synctest.Wait() // the worker waits for the next: it, not a new one, runs it
		}
		if ran != n {
			t.Errorf("%d tasks ran, want %d", ran, n)
		}
		// Two at once need two workers; both end once idle.
		release := make(chan struct{})
		var both sync.WaitGroup
		both.Add(2)
		for range 2 {
			w.run(func() { <-release; both.Done() })
		}
		close(release)
		both.Wait()
		time.Sleep(workerIdle)
		synctest.Wait()
	})
}
