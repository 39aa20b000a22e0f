package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// WithPhaseTimeouts returns hc with two phases of each request bounded, as
// the reference's CUSTOM_POOL_TIMEOUT and CUSTOM_WRITE_TIMEOUT bound them:
// pool, the wait for a connection, pooled or new (dialing is bounded too,
// by NewHTTPClient's connect timeout); write, from having the connection
// to the request's last byte sent. Zero leaves a phase unbounded. The
// reference's read timeout, the wait for each part of the reply, is the
// dispatcher's idle timeout.
func WithPhaseTimeouts(hc *http.Client, pool, write time.Duration) *http.Client {
	if pool <= 0 && write <= 0 {
		return hc
	}
	out := *hc
	if out.Transport == nil {
		out.Transport = http.DefaultTransport
	}
	out.Transport = phaseTransport{next: out.Transport, pool: pool, write: write}
	return &out
}

// phaseTimeout is a phase of a request that ran past its bound. It is a
// net.Error timeout, so it is retried and blamed as a slow provider.
type phaseTimeout struct {
	phase string
	limit time.Duration
}

func (e *phaseTimeout) Error() string   { return fmt.Sprintf("%s took longer than %s", e.phase, e.limit) }
func (e *phaseTimeout) Timeout() bool   { return true }
func (e *phaseTimeout) Temporary() bool { return true }

type phaseTransport struct {
	next        http.RoundTripper
	pool, write time.Duration
}

func (t phaseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	w := &phaseWatch{cancel: cancel}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn:      func(string) { w.start(t.pool, "waiting for a connection") },
		GotConn:      func(httptrace.GotConnInfo) { w.start(t.write, "sending the request") },
		WroteRequest: func(httptrace.WroteRequestInfo) { w.start(0, "") },
	})
	resp, err := t.next.RoundTrip(r.WithContext(ctx))
	w.start(0, "")
	if err != nil {
		var pt *phaseTimeout
		if cause := context.Cause(ctx); errors.As(cause, &pt) && r.Context().Err() == nil {
			err = pt
		}
		cancel(nil)
		return nil, err
	}
	// The reply is read under ctx: cancel it only once the body is closed.
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// phaseWatch times the phase under way and cancels the request with a
// phaseTimeout when it runs past its bound.
type phaseWatch struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer
}

// start begins a phase bounded by limit, ending the one before; a zero
// limit leaves it unbounded.
func (w *phaseWatch) start(limit time.Duration, phase string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if limit > 0 {
		w.timer = time.AfterFunc(limit, func() { w.cancel(&phaseTimeout{phase: phase, limit: limit}) })
	}
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelCauseFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel(nil)
	return err
}
