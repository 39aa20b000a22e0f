package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// A provider (or the proxy in front of it) that redirects a streaming call
// has the HTTP client follow the redirect; the body of the redirect is the
// client's to drain and close. The stream tap must not take it away and
// leave it open: the connection would stay held, with its server writing
// into it, for as long as the caller's context lives.
func TestARedirectedStreamClosesTheRedirectsBody(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "hello there"} })
	released := make(chan struct{}) // the client closed the redirect's connection
	testDone := make(chan struct{})
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", fake.URL()+"/chat/completions")
		w.WriteHeader(http.StatusTemporaryRedirect)
		// More than net/http drains of a redirect's body (2 KiB), so that
		// closing it closes the connection, and then no end.
		_, _ = w.Write([]byte(strings.Repeat("moved\n", 1000)))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(released)
		case <-testDone:
		}
	}))
	defer redirector.Close()
	defer close(testDone)
	c := NewCompat("Custom API", redirector.URL+"/v1", "k", NewHTTPClient(5*time.Second))
	// The caller's context outlives the call, as a long-lived caller's does.
	res, err := c.Generate(context.Background(), Request{Model: "m", Stream: true,
		Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "hello there" {
		t.Fatalf("content %q, want the redirect target's", res.Content)
	}
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("the redirect's body was left open after the call returned: its connection is held")
	}
}
