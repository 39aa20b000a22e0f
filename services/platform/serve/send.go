package serve

import (
	"net/http"
	"time"
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
		next.ServeHTTP(&pacedWriter{ResponseWriter: w, rc: rc, d: d}, r)
		_ = rc.SetWriteDeadline(time.Now().Add(d))
	})
}

// pacedWriter writes an answer in pieces, each with its own deadline.
type pacedWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *pacedWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		piece := p[:min(len(p), SendPiece)]
		_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
		n, err := w.ResponseWriter.Write(piece)
		written += n
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
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.d))
	return w.rc.Flush()
}

func (w *pacedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
