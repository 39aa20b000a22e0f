package streamhttp

import (
	"bytes"
	"io"
	"net/http"
)

// MaxBody is the largest request body the MCP endpoint takes: the go-sdk's
// default, now applied before anything buffers a body (Calls peeks at
// bodies, and used to read 8 MiB of one the SDK would then refuse).
const MaxBody = 4 << 20

// headBytes is how much of an oversized body is read: enough to find the
// id of the call it carries, so the refusal answers that call.
const headBytes = 4 << 10

// LimitBody refuses request bodies over limit before anything reads them
// whole. A declared length over the limit is refused after reading only
// its head; a body of unknown length (chunked) is read up to limit+1 bytes,
// and refused when it goes past. refuse writes the answer; size is the
// declared length, or -1 when there was none.
func LimitBody(limit int64, refuse func(w http.ResponseWriter, head []byte, size int64),
	next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > limit {
			head, _ := io.ReadAll(io.LimitReader(r.Body, headBytes))
			refuse(w, head, r.ContentLength)
			return
		}
		if r.ContentLength < 0 {
			body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
			if int64(len(body)) > limit {
				refuse(w, body[:headBytes], -1)
				return
			}
			rest := io.Reader(r.Body) // a read error, if any, comes again to whoever reads on
			if err == nil {
				r.ContentLength = int64(len(body))
				rest = http.NoBody
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), rest), r.Body}
		}
		next.ServeHTTP(w, r)
	})
}
