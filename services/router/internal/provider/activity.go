package provider

import (
	"context"
	"io"
	"net/http"
)

// activityKey carries the function a call's HTTP client calls as bytes of
// the reply arrive (WithActivity).
type activityKey struct{}

// WithActivity returns ctx carrying onBytes, which the provider's HTTP
// client calls whenever bytes of a reply arrive: its head, or any part of
// its body. A stream is busy while a reasoning model streams its reasoning
// or a provider sends keep-alive comments, though no answer's text comes;
// an idle timeout that heard of the text alone cut such calls and asked
// again, each attempt paid for.
func WithActivity(ctx context.Context, onBytes func()) context.Context {
	return context.WithValue(ctx, activityKey{}, onBytes)
}

// activityTransport tells a request's WithActivity function of the bytes
// its reply brings.
type activityTransport struct{ next http.RoundTripper }

func (t activityTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if onBytes, ok := r.Context().Value(activityKey{}).(func()); ok && err == nil {
		onBytes()
		resp.Body = &activeBody{ReadCloser: resp.Body, onBytes: onBytes}
	}
	return resp, err
}

// activeBody calls onBytes on each read that brings bytes.
type activeBody struct {
	io.ReadCloser
	onBytes func()
}

func (b *activeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.onBytes()
	}
	return n, err
}
