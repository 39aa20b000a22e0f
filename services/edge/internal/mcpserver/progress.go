package mcpserver

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	now := time.Now()
	h := &heartbeat{report: report, start: now, sent: now, done: make(chan struct{}), last: tool + " started"}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		// The beat is due an interval after whatever went out last, an
		// update or a beat: a ticker's fixed beats, skipped when an update
		// had just gone, left up to twice the interval between two.
		beat := time.NewTimer(interval)
		defer beat.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-h.done:
				return
			case now := <-beat.C:
				h.mu.Lock()
				wait := interval - now.Sub(h.sent)
				msg := fmt.Sprintf("%s (%s elapsed)", h.last, now.Sub(h.start).Round(time.Second))
				h.mu.Unlock()
				if wait > 0 {
					beat.Reset(wait)
					continue
				}
				h.send(msg)
				beat.Reset(interval)
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

// progressReporter sends notifications/progress when the client asked for
// them with a progress token: through the SDK's session, or, for a call
// answered without one, to the sink its context carries. Progress only
// ever increases.
func progressReporter(ctx context.Context, req *mcp.CallToolRequest) func(string) {
	token := req.Params.GetProgressToken()
	if !validProgressToken(token) {
		return nil
	}
	notify, _ := ctx.Value(progressSinkKey{}).(ProgressSink)
	if req.Session != nil {
		notify = func(p *mcp.ProgressNotificationParams) { _ = req.Session.NotifyProgress(ctx, p) }
	}
	if notify == nil {
		return nil
	}
	var mu sync.Mutex
	n := 0.0
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		n++
		notify(&mcp.ProgressNotificationParams{ProgressToken: token, Message: msg, Progress: n})
	}
}

// maxProgressToken bounds the progress token a call's notifications echo,
// each heartbeat again: far more than any client's (a request id, a UUID).
const maxProgressToken = 1 << 10

// validProgressToken tells whether a call asked for progress with a token
// MCP allows, a string or an integer, of a sensible size: an integer past
// 2^53 decodes as another, and its notifications would name that one.
// Another gets no notifications, whichever path answers the call.
func validProgressToken(token any) bool {
	switch t := token.(type) {
	case string:
		return len(t) <= maxProgressToken
	case float64: // as JSON decodes a number, exact below 2^53
		return t == math.Trunc(t) && math.Abs(t) < 1<<53
	case int, int32, int64:
		return true
	}
	return false
}

// ProgressSink sends a call's progress notifications where no SDK session
// does: the edge's own answer to a tools/call (fastcall) writes them to
// the call's event stream, as the SDK's session would.
type ProgressSink func(*mcp.ProgressNotificationParams)

type progressSinkKey struct{}

// WithProgressSink is ctx carrying sink, for a tool handler called
// without the SDK's session.
func WithProgressSink(ctx context.Context, sink ProgressSink) context.Context {
	return context.WithValue(ctx, progressSinkKey{}, sink)
}
