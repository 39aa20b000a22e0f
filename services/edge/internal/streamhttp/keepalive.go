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
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { kw.tick(interval, stop) })
		// The ticker must be gone before the handler returns: the server
		// forbids writes to a finished response.
		defer func() {
			close(stop)
			wg.Wait()
		}()
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

// keepAliveWriter gives the handler a header map of its own, so the ticker
// never touches a map the handler is writing; the handler's headers are
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

func (w *keepAliveWriter) tick(interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval / 2)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			w.ping(interval)
		}
	}
}

func (w *keepAliveWriter) ping(interval time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken || time.Since(w.lastWrite) < interval {
		return
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
