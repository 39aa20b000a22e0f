package streamhttp

import (
	"bytes"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"
)

// keepAliveComment is an SSE comment line: clients ignore it, while proxies
// and clients that time out idle streams see traffic.
var keepAliveComment = []byte(": keep-alive\n\n")

// KeepAlive writes an SSE comment on a text/event-stream response whenever
// interval passes without anything written to it. Comments only go between
// whole events, never inside one.
//
// A tools/call (one Calls tracks) answers on an SSE stream that the SDK
// only opens with the call's first event; a call that runs silently would
// send nothing at all. For those, KeepAlive opens the stream itself once
// interval has passed, and the SDK's own status line and headers, which
// can only be the same by then, are dropped.
func KeepAlive(interval time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kw := &keepAliveWriter{w: w, header: http.Header{}, lastWrite: time.Now(), atBoundary: true,
			eager: Lifetime(r.Context()) != nil && acceptsSSE(r)}
		// A timer, not a goroutine with a ticker: most calls end before it
		// first fires, and then cost no goroutine at all.
		kw.mu.Lock() // the timer's function reads kw.timer
		kw.timer = time.AfterFunc(interval, func() { kw.ping(interval) })
		kw.mu.Unlock()
		defer kw.stop()
		next.ServeHTTP(kw, r)
	})
}

func acceptsSSE(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(v, "text/event-stream") {
			return true
		}
	}
	return false
}

// keepAliveWriter gives the handler a header map of its own, so the pings
// never touch a map the handler is writing; the handler's headers are
// copied to the response when it sends its status.
type keepAliveWriter struct {
	w      http.ResponseWriter
	header http.Header
	eager  bool

	mu          sync.Mutex
	wroteHeader bool
	streaming   bool // the response is an SSE stream
	atBoundary  bool // what was written so far ends a whole event
	lastWrite   time.Time
	broken      bool
	stopped     bool        // the handler has returned: nothing more may be written
	timer       *time.Timer // runs ping when the next comment is due
}

func (w *keepAliveWriter) Header() http.Header { return w.header }

func (w *keepAliveWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(code)
}

func (w *keepAliveWriter) writeHeaderLocked(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	maps.Copy(w.w.Header(), w.header)
	// An answer sent with its length is whole: a comment after it would be
	// refused, and the server would close the connection it had offered
	// to keep.
	w.streaming = code == http.StatusOK && strings.HasPrefix(w.header.Get("Content-Type"), "text/event-stream") &&
		w.header.Get("Content-Length") == ""
	w.w.WriteHeader(code)
}

func (w *keepAliveWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(http.StatusOK)
	n, err := w.w.Write(p)
	if n > 0 {
		w.atBoundary = bytes.HasSuffix(p[:n], []byte("\n\n"))
		w.lastWrite = time.Now()
	}
	return n, err
}

func (w *keepAliveWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(http.StatusOK)
	_ = http.NewResponseController(w.w).Flush()
}

// Unwrap lets http.ResponseController reach the server's writer for
// deadlines and the like.
func (w *keepAliveWriter) Unwrap() http.ResponseWriter { return w.w }

// stop ends the pings before the handler returns, since the server
// forbids writes to a finished response: a ping under way finishes first,
// as it holds the lock, and none starts after.
func (w *keepAliveWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.timer.Stop()
}

// ping writes a comment if interval has passed since the last write, and
// sets the timer for the next, until the handler returns or the client
// has gone. The next is due an interval after the last write: checked at
// fixed beats, a stream could go silent for half an interval more.
func (w *keepAliveWriter) ping(interval time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.broken {
		return
	}
	if since := time.Since(w.lastWrite); since < interval {
		w.timer.Reset(interval - since)
		return
	}
	// Inside an event, the comment waits for its end, looked for soon.
	next := interval
	defer func() { w.timer.Reset(next) }()
	if w.wroteHeader && w.streaming && !w.atBoundary {
		next = interval / 10
	}
	if !w.wroteHeader && w.eager {
		h := w.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-transform")
		w.w.WriteHeader(http.StatusOK)
		w.wroteHeader, w.streaming = true, true
	}
	if !w.streaming || !w.atBoundary {
		return
	}
	if _, err := w.w.Write(keepAliveComment); err != nil {
		w.broken = true // the client left; the handler will notice on its own
		return
	}
	w.lastWrite = time.Now()
	_ = http.NewResponseController(w.w).Flush()
}
