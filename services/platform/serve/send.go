package serve

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// SendPiece is how much of an answer goes out under one deadline: a client
// reading faster than about 2.2 KB/s (64 KiB in SendTime) takes each piece
// in its time.
const SendPiece = 64 << 10

// SendTime bounds how long a piece of an answer may wait for its client to
// take it. A client that stops reading would otherwise hold the answer (a
// thread of megabytes, an export's stream from memory, an MCP result) for
// as long as it kept its connection: net/http sets no write deadline.
const SendTime = 30 * time.Second

// Paced gives every piece of an answer (SendPiece bytes) d to reach its
// client, and the answer's end, which net/http writes once the handler has
// returned, d of its own. The bound is on progress, not on the whole
// answer, so a client that reads slowly but steadily gets all of a large
// one, and a stream that is quiet between events (MCP's progress, an
// export waiting for memory) is not cut for its quiet. The deadline is set
// before the handler runs so that what goes out before its first Write (a
// head sent by WriteHeader and Flush, net/http's 100 Continue) is bound
// too.
func Paced(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if rc.SetWriteDeadline(time.Now().Add(d)) != nil {
			next.ServeHTTP(w, r) // a writer without deadlines
			return
		}
		pw := &pacedWriter{ResponseWriter: w, rc: rc, d: d}
		next.ServeHTTP(pw, r)
		if pw.finish() {
			// Cut off: the answer must not end as if whole (an export
			// with threads missing would read as complete), so the
			// connection is dropped mid-answer; its span says why.
			trace.SpanFromContext(r.Context()).SetStatus(otelcodes.Error, "answer cut off: its reader was too slow")
			panic(http.ErrAbortHandler)
		}
		_ = rc.SetWriteDeadline(time.Now().Add(d))
	})
}

// pacedWriter writes an answer in pieces, each with its own deadline.
type pacedWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration

	// mu orders a cut with the deadline a piece sets: once cut, no piece
	// sets one of its own, and the one being written has passed its own.
	// Once done (its handler returned), a cut comes too late to act: the
	// connection may serve the client's next request.
	mu     sync.Mutex
	cut    bool
	done   bool
	cancel context.CancelCauseFunc // the request's context, when Cuttable made it
	sent   atomic.Int64            // bytes handed to the connection
	// marked is whether Mark was called; moved, when the first piece
	// after it went out (zero until one has).
	marked bool
	moved  time.Time
}

// finish marks the answer's handler as returned, and reports whether the
// answer was cut off.
func (w *pacedWriter) finish() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	return w.cut
}

// errCut is a write to an answer that was cut.
var errCut = errors.New("serve: the answer was cut off")

// next gives the next piece its deadline, unless the answer was cut.
func (w *pacedWriter) next() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cut {
		return errCut
	}
	now := time.Now()
	if w.marked && w.moved.IsZero() {
		w.moved = now
	}
	return w.rc.SetWriteDeadline(now.Add(w.d))
}

// Sent is how many bytes of the answer went to the connection so far.
func (w *pacedWriter) Sent() int64 { return w.sent.Load() }

// Mark starts watching for the answer's next bytes (Moved).
func (w *pacedWriter) Mark() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.marked, w.moved = true, time.Time{}
}

// Moved is when the first piece of the answer after the last Mark began
// to go out; zero before one has.
func (w *pacedWriter) Moved() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.moved
}

// The request's context ends too, so that what the handler waits for
// (memory's read of the thread) gives up, and the room its answer holds
// comes free.
func (w *pacedWriter) Cut() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || w.cut {
		return
	}
	w.cut = true
	_ = w.rc.SetWriteDeadline(time.Now())
	if w.cancel != nil {
		w.cancel(errCut)
	}
}

func (w *pacedWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		piece := p[:min(len(p), SendPiece)]
		if err := w.next(); errors.Is(err, errCut) {
			return written, err
		}
		n, err := w.ResponseWriter.Write(piece)
		written += n
		w.sent.Add(int64(n))
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

func (w *pacedWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush with its error: http.ResponseController uses it, so
// a handler learns its client stopped taking the answer.
func (w *pacedWriter) FlushError() error {
	if err := w.next(); errors.Is(err, errCut) {
		return err
	}
	return w.rc.Flush()
}

// An Answer is a paced answer on its way: how much of it went out, when
// its pieces began to go out again after a Mark (a reader marks it as it
// takes room, and measures its pace from there), and what cuts it off.
type Answer interface {
	Sent() int64
	Mark()
	Moved() time.Time
	Cut()
}

// Cuttable lets next's handlers see their answer on its way and cut it off
// (AnswerOf their request's context), when it is paced: placed right inside
// Paced. The gateway cuts off an answer whose slow reader holds room that
// others wait for.
func Cuttable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pw, ok := w.(*pacedWriter); ok {
			ctx, cancel := context.WithCancelCause(context.WithValue(r.Context(), answerKey{}, Answer(pw)))
			defer cancel(nil)
			pw.mu.Lock()
			pw.cancel = cancel
			pw.mu.Unlock()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

type answerKey struct{}

// AnswerOf is the answer of the request whose context ctx is, which
// Cuttable made; nil for one it did not.
func AnswerOf(ctx context.Context) Answer {
	a, _ := ctx.Value(answerKey{}).(Answer)
	return a
}

func (w *pacedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
