package mcpserver

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestHeartbeatsNeverLeaveMoreThanAnInterval: a client hears something at
// least every interval, however the call's own updates fall. The ticker
// skipped a beat that came just after an update, and left up to 1.9
// intervals between two notifications (9.3 s at the default 5 s).
func TestHeartbeatsNeverLeaveMoreThanAnInterval(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const interval = 5 * time.Second
		var mu sync.Mutex
		var sent []time.Time
		start := time.Now()
		h := startHeartbeat(context.Background(), interval, "chat", func(string) {
			mu.Lock()
			sent = append(sent, time.Now())
			mu.Unlock()
		})
		// A model streaming for a while, its updates 0.95 s apart, then
		// silent: the case a ticker handles worst.
		for range 6 {
			time.Sleep(950 * time.Millisecond)
			h.update("answering")
		}
		time.Sleep(30 * time.Second)
		end := time.Now()
		h.stop()
		mu.Lock()
		defer mu.Unlock()
		last := start
		for _, at := range append(sent, end) { // the silence at the end counts too
			if gap := at.Sub(last); gap > interval {
				t.Errorf("%v without a notification, ending %v after the start; want at most %v", gap,
					at.Sub(start), interval)
			}
			last = at
		}
	})
}
