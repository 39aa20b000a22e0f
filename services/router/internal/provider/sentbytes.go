package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// sentBytes counts the bytes of a request body the transport read, across
// the copies it may take to send the request again.
type sentBytes struct{ read atomic.Int64 }

func (s *sentBytes) n() int64 {
	if s == nil {
		return 0
	}
	return s.read.Load()
}

type countedBody struct {
	io.ReadCloser
	sent *sentBytes
}

func (b countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.sent.read.Add(int64(n))
	return n, err
}

// countSent counts a body held in memory (one http.NewRequest can send
// again: GetBody set) without wrapping it: net/http sends the head of a
// body it cannot tell is in memory on its own, ahead of the body, and a
// provider call then costs two writes. It counts as sent once the
// transport has a connection to send it on: otelhttp counts what the
// transport read, the same but for a write that fails midway, or a server
// that answers (HTTP/2) before it has read the body. Nil for any other
// body.
func countSent(ctx context.Context, r *http.Request) (context.Context, *sentBytes) {
	if r.GetBody == nil || r.ContentLength <= 0 || r.Body == nil || r.Body == http.NoBody {
		return ctx, nil
	}
	sent := &sentBytes{}
	n := r.ContentLength
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { sent.read.Store(n) },
	}), sent
}

// countBody makes r's body count what is read of it; nil when it has none.
func countBody(r *http.Request) *sentBytes {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	sent := &sentBytes{}
	r.Body = countedBody{ReadCloser: r.Body, sent: sent}
	if getBody := r.GetBody; getBody != nil {
		r.GetBody = func() (io.ReadCloser, error) {
			b, err := getBody()
			if err != nil || b == nil || b == http.NoBody {
				return b, err
			}
			sent.read.Store(0) // a new copy: count what it sends
			return countedBody{ReadCloser: b, sent: sent}, nil
		}
	}
	return sent
}
