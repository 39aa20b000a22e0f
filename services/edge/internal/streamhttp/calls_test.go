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

	"github.com/google/go-cmp/cmp"
)

// recorder stands in for the SDK: it blocks each tools/call until its
// lifetime ends or the test releases it, then answers on the exchange, and
// records the other bodies it was sent.
type recorder struct {
	started chan context.Context // each call's lifetime, as the call starts
	release chan struct{}        // closed to let the calls still running answer

	mu     sync.Mutex
	bodies []string
}

func newRecorder() *recorder {
	return &recorder{started: make(chan context.Context, 4), release: make(chan struct{})}
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
	rec.started <- life
	select {
	case <-life.Done():
		// The SDK writes the call's error reply only while the exchange
		// lives; a cancellation must leave it alive.
		if r.Context().Err() != nil {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "cancelled")
	case <-rec.release:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "answered")
	}
}

// reply is what a POST got back.
type reply struct {
	Status      int
	ContentType string
	Body        string
}

// post sends body with the given headers ("Mcp-Session-Id", "Authorization").
func post(t *testing.T, url, body string, header map[string]string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return reply{}
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header.Get("Content-Type"), string(b)}
}

const (
	callOne   = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"hi"}}}`
	cancelOne = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`
)

// startCall sends a call in the background and returns its lifetime once
// it runs, and what the client finally got.
func startCall(t *testing.T, rec *recorder, url, body string, header map[string]string) (
	context.Context, <-chan reply) {
	t.Helper()
	got := make(chan reply, 1)
	go func() { got <- post(t, url, body, header) }()
	select {
	case life := <-rec.started:
		return life, got
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not start")
		return nil, nil
	}
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("timed out")
		var zero T
		return zero
	}
}

func TestCancelledNotificationEndsTheCall(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	session := map[string]string{SessionHeader: newSessionID()}
	life, got := startCall(t, rec, srv.URL, callOne, session)
	post(t, srv.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`, session)
	if life.Err() != nil {
		t.Fatal("a cancellation naming another id ended the call")
	}
	post(t, srv.URL, cancelOne, session)
	if cause := context.Cause(life); !errors.Is(cause, ErrClientCancelled) {
		t.Errorf("the call's lifetime ended with %v, want %v", cause, ErrClientCancelled)
	}
	want := reply{Status: http.StatusOK, ContentType: "application/json", Body: "cancelled"}
	if diff := cmp.Diff(want, wait(t, got)); diff != "" {
		t.Errorf("the cancelled call's reply (-want +got):\n%s", diff)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.bodies[0] != callOne {
		t.Errorf("the handler read %q, want the body unchanged", rec.bodies[0])
	}
}

func TestReusedIDInOneSessionCancelsNothing(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	session := map[string]string{SessionHeader: newSessionID()}
	first, got1 := startCall(t, rec, srv.URL, callOne, session)
	second, got2 := startCall(t, rec, srv.URL, callOne, session)
	post(t, srv.URL, cancelOne, session)
	if first.Err() != nil || second.Err() != nil {
		t.Error("a cancellation naming two calls ended one of them")
	}
	close(rec.release)
	for _, got := range []<-chan reply{got1, got2} {
		if r := wait(t, got); r.Body != "answered" {
			t.Errorf("reply %+v, want the call's answer", r)
		}
	}
}

func TestDroppedConnectionEndsTheCall(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	life := dropOnceStarted(t, rec, srv.URL, callOne)
	if errors.Is(context.Cause(life), ErrClientCancelled) {
		t.Errorf("cause %v, want the dropped connection's", context.Cause(life))
	}
}

func TestOtherBodiesPassUntouched(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	bodies := []string{
		`not json`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"Method":"tools/call"}`, // no method to the SDK, which reads names exactly
		strings.Repeat("x", maxPeek+10),
	}
	for _, b := range bodies {
		post(t, srv.URL, b, nil)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, b := range bodies {
		if rec.bodies[i] != b {
			t.Errorf("body %d changed (len %d, want %d)", i, len(rec.bodies[i]), len(b))
		}
	}
}

// TestACallIsACallWhateverElseTheBodyHolds: a call whose body also held a
// member named "method" in other letters (which the SDK, reading names
// exactly, leaves alone), or anything after its JSON (which the SDK does
// not read), was read here as another message or none, and ran on after
// its client had gone.
func TestACallIsACallWhateverElseTheBodyHolds(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	// The SDK reads a body's first value and leaves what follows it.
	for _, body := range []string{strings.TrimSuffix(callOne, "}") + `,"METHOD":"ping","Id":7}`, callOne + " x",
		callOne + "{}", callOne + "\x00", "[" + callOne + "] x"} {
		dropOnceStarted(t, rec, srv.URL, body)
	}
}

// dropOnceStarted posts body, drops the connection once the call it holds
// has started, and returns the call's lifetime once it has ended.
func dropOnceStarted(t *testing.T, rec *recorder, url, body string) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = http.DefaultClient.Do(req) }()
	life := wait(t, rec.started)
	cancel()
	wait(t, life.Done())
	return life
}

// TestABatchsCallsEndWithTheirExchange: the calls of a batch (which a
// 2025-03-26 client may send) had no lifetime: they ran on after their
// client left, and its cancellations reached none of them. They share the
// batch's: a cancellation of any of them ends them all.
func TestABatchsCallsEndWithTheirExchange(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	srv := httptest.NewServer(NewCalls().Wrap(rec))
	defer srv.Close()
	batch := "[" + callOne + "," + strings.Replace(callOne, `"id":1`, `"id":2`, 1) + "]"
	session := map[string]string{SessionHeader: newSessionID()}
	life, got := startCall(t, rec, srv.URL, batch, session)
	post(t, srv.URL, strings.Replace(cancelOne, `"requestId":1`, `"requestId":2`, 1), session)
	if cause := context.Cause(life); !errors.Is(cause, ErrClientCancelled) {
		t.Errorf("the batch's lifetime ended with %v, want %v", cause, ErrClientCancelled)
	}
	if r := wait(t, got); r.Body != "cancelled" {
		t.Errorf("reply %+v, want the cancelled batch's", r)
	}
}

// closingBody is a request body that, as net/http's, fails once closed:
// the server closes it when a response's head goes out first (KeepAlive
// opens a stalled call's stream).
type closingBody struct {
	r      io.Reader
	closed bool
}

func (b *closingBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errors.New("http: invalid Read on closed Body")
	}
	return b.r.Read(p)
}

func (b *closingBody) Close() error { b.closed = true; return nil }

// TestAPeekedBodyOutlivesTheOriginal: a body read whole to learn what a
// request is reads back whole after the server closed the original, so a
// call whose stream opened before its handler read the body still runs.
func TestAPeekedBodyOutlivesTheOriginal(t *testing.T) {
	t.Parallel()
	orig := &closingBody{r: strings.NewReader(callOne)}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body = orig
	if msgs := peek(r); len(msgs) != 1 {
		t.Fatal("the call was not recognised")
	}
	_ = orig.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil || string(b) != callOne {
		t.Errorf("read back %q, %v; want the whole body", b, err)
	}
}

// cutBody fails once, as net/http's body of a declared length does when
// the client sends less, and reads as ended after that.
type cutBody struct {
	r      io.Reader
	failed bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && !b.failed {
		b.failed = true
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

func (*cutBody) Close() error { return nil }

// TestACutBodyStaysCut: a body that failed while it was peeked fails again
// for the handler, rather than reading as a whole, shorter body.
func TestACutBodyStaysCut(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body = &cutBody{r: strings.NewReader(callOne[:20])}
	peek(r)
	if whole := r.Body.(*Peeked).Whole(); whole != nil {
		t.Errorf("a cut body is offered whole: %q", whole)
	}
	if b, err := io.ReadAll(r.Body); err == nil {
		t.Errorf("read back %q with no error; want the cut body's", b)
	}
}

// TestAPeekedBodyIsOfferedWhole: a body read to its end is offered whole,
// at any declared length or none, so the handler need not read it again;
// one longer than the endpoint takes is not.
func TestAPeekedBodyIsOfferedWhole(t *testing.T) {
	t.Parallel()
	long := strings.Repeat(" ", maxPeek) + callOne
	for _, tc := range []struct {
		name     string
		body     string
		declared int64
		want     string
	}{
		{"its length declared", callOne, int64(len(callOne)), callOne},
		{"no length declared", callOne, -1, callOne},
		{"longer than it takes", long, int64(len(long)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(tc.body)), tc.declared
			peek(r)
			if got := string(r.Body.(*Peeked).Whole()); got != tc.want {
				t.Errorf("offered %d bytes whole, want %d", len(got), len(tc.want))
			}
			if b, err := io.ReadAll(r.Body); err != nil || string(b) != tc.body {
				t.Errorf("read back %d bytes, %v; want the body", len(b), err)
			}
		})
	}
}

// TestADeclaredLengthIsNotTakenOnTrust: a body that declares the most the
// endpoint takes and sends one byte gets a buffer of what came, not of
// what it declared: 200 such requests held 800 MiB.
func TestADeclaredLengthIsNotTakenOnTrust(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader("{")), MaxBody
	peek(r)
	if whole := r.Body.(*Peeked).Whole(); string(whole) != "{" || cap(whole) > maxPresized {
		t.Errorf("peeked %q into a buffer of %d bytes, want at most %d", whole, cap(whole), maxPresized)
	}
}
