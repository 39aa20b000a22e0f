package streamhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a handler that blocks each tools/call until its lifetime ends
// and reports how it ended, and echoes other bodies.
type recorder struct {
	mu      sync.Mutex
	started chan struct{}
	causes  []error
	bodies  []string
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.bodies = append(rec.bodies, string(b))
	rec.mu.Unlock()
	life := Lifetime(r.Context())
	if life == nil {
		return
	}
	rec.started <- struct{}{}
	select {
	case <-life.Done():
		rec.mu.Lock()
		rec.causes = append(rec.causes, context.Cause(life))
		rec.mu.Unlock()
	case <-time.After(time.Second):
	}
}

func post(t *testing.T, url, body string) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return
	}
	res.Body.Close()
}

func TestCancelledNotificationEndsTheCall(t *testing.T) {
	rec := &recorder{started: make(chan struct{}, 2)}
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"hi"}}}`
	done := make(chan struct{})
	go func() {
		post(t, srv.URL, call)
		close(done)
	}()
	<-rec.started
	post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`)
	post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`)
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("the call was not cancelled")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.causes) != 1 || !errors.Is(rec.causes[0], ErrClientCancelled) {
		t.Errorf("causes = %v", rec.causes)
	}
	if rec.bodies[0] != call {
		t.Errorf("the handler read %q, want the body unchanged", rec.bodies[0])
	}
}

func TestAmbiguousCancellationCancelsNothing(t *testing.T) {
	rec := &recorder{started: make(chan struct{}, 2)}
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { post(t, srv.URL, call) })
	}
	<-rec.started
	<-rec.started
	start := time.Now()
	post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	wg.Wait()
	if time.Since(start) < 900*time.Millisecond {
		t.Errorf("a cancellation naming two calls with the same id ended them")
	}
}

func TestDroppedConnectionEndsTheCall(t *testing.T) {
	rec := &recorder{started: make(chan struct{}, 1)}
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":"a","method":"tools/call"}`))
	go func() {
		<-rec.started
		cancel()
	}()
	_, _ = http.DefaultClient.Do(req)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		rec.mu.Lock()
		n := len(rec.causes)
		rec.mu.Unlock()
		if n == 1 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the call outlived its connection")
}

func TestOtherBodiesPassUntouched(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	bodies := []string{`not json`, `[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]`, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, strings.Repeat("x", maxPeek+10)}
	for _, b := range bodies {
		post(t, srv.URL, b)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, b := range bodies {
		if rec.bodies[i] != b {
			t.Errorf("body %d changed (len %d, want %d)", i, len(rec.bodies[i]), len(b))
		}
	}
}
