package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// heartbeat keeps a client informed while a call runs: every status update
// goes out at once, and when nothing new happens for an interval the last
// status goes out again with the time elapsed. Clients that reset their
// timeout on progress (the TypeScript SDK's resetTimeoutOnProgress) then
// wait out long model calls instead of giving up at 60 seconds.
type heartbeat struct {
	report func(string)
	start  time.Time
	done   chan struct{}
	wg     sync.WaitGroup

	mu   sync.Mutex
	last string
	sent time.Time
}

func startHeartbeat(ctx context.Context, interval time.Duration, tool string, report func(string)) *heartbeat {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	h := &heartbeat{report: report, start: time.Now(), done: make(chan struct{}), last: tool + " started"}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-h.done:
				return
			case now := <-tick.C:
				h.mu.Lock()
				due := now.Sub(h.sent) >= interval-interval/10
				msg := fmt.Sprintf("%s (%s elapsed)", h.last, now.Sub(h.start).Round(time.Second))
				h.mu.Unlock()
				if due {
					h.send(msg)
				}
			}
		}
	}()
	return h
}

// update records and sends a new status.
func (h *heartbeat) update(msg string) {
	h.mu.Lock()
	h.last = msg
	h.mu.Unlock()
	h.send(msg)
}

func (h *heartbeat) send(msg string) {
	h.mu.Lock()
	h.sent = time.Now()
	h.mu.Unlock()
	h.report(msg)
}

func (h *heartbeat) stop() {
	close(h.done)
	h.wg.Wait()
}
