package provider

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// retryAfterKey holds, in a request's context, where the transport writes
// the Retry-After the provider sent: client libraries drop headers from
// their errors.
type retryAfterKey struct{}

type retryAfterSlot struct {
	mu sync.Mutex
	d  time.Duration
}

// withRetryAfterSlot returns a context whose requests record Retry-After.
func withRetryAfterSlot(ctx context.Context) (context.Context, *retryAfterSlot) {
	slot := &retryAfterSlot{}
	return context.WithValue(ctx, retryAfterKey{}, slot), slot
}

func (s *retryAfterSlot) get() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.d
}

// retryAfterTransport notes Retry-After on 429 and 503 answers.
type retryAfterTransport struct{ next http.RoundTripper }

func (t retryAfterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return resp, err
	}
	if slot, ok := r.Context().Value(retryAfterKey{}).(*retryAfterSlot); ok {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			slot.mu.Lock()
			slot.d = d
			slot.mu.Unlock()
		}
	}
	return resp, err
}

// parseRetryAfter reads seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

// tidy runs one provider call with a Retry-After slot, then fills the
// error's RetryAfter from it and keeps the key out of its message.
func tidy(ctx context.Context, key string, call func(context.Context) (Result, error)) (Result, error) {
	ctx, slot := withRetryAfterSlot(ctx)
	res, err := call(ctx)
	var perr *Error
	if errors.As(err, &perr) {
		perr.RetryAfter = slot.get()
		perr.Msg = redact(perr.Msg, key)
	}
	return res, err
}
