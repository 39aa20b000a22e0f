package streamhttp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sse answers with the given writes, pausing between them.
func sse(pause time.Duration, writes ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, s := range writes {
			_, _ = io.WriteString(w, s)
			http.NewResponseController(w).Flush()
			time.Sleep(pause)
		}
	})
}

// served is h's body for a GET, served in a synctest bubble: the
// handler's pauses and the pings run on the bubble's clock, not the
// machine's, so a busy machine changes nothing.
func served(t *testing.T, h http.Handler) string {
	t.Helper()
	var got string
	synctest.Test(t, func(t *testing.T) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		got = rec.Body.String()
	})
	return got
}

const (
	ping       = ": keep-alive\n\n"
	firstEvent = "event: message\ndata: {}\n\n"
	lastEvent  = "event: message\ndata: {\"done\":true}\n\n"
)

// Silence of 150 ms at a 20 ms interval holds seven comments, each after
// a whole event.
func TestKeepAliveFillsSilenceBetweenEvents(t *testing.T) {
	t.Parallel()
	got := served(t, KeepAlive(20*time.Millisecond, sse(150*time.Millisecond, firstEvent, lastEvent)))
	want := firstEvent + strings.Repeat(ping, 7) + lastEvent + strings.Repeat(ping, 7)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

// A pause inside an event gets no comment: it would break the event.
func TestKeepAliveNeverSplitsAnEvent(t *testing.T) {
	t.Parallel()
	got := served(t, KeepAlive(20*time.Millisecond, sse(150*time.Millisecond, "event: message\n", "data: {}\n\n")))
	want := firstEvent + strings.Repeat(ping, 7)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestKeepAliveLeavesOtherResponsesAlone(t *testing.T) {
	t.Parallel()
	h := KeepAlive(10*time.Millisecond, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		time.Sleep(100 * time.Millisecond)
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	if got := served(t, h); got != `{"ok":true}` {
		t.Fatalf("JSON body = %q", got)
	}
}

// TestKeepAliveLeavesAnAnswerOfKnownLengthAlone: a comment after an
// answer sent with its length would be refused by the server, which then
// closes the connection it told the client to keep (it counts the refused
// bytes as written), failing the client's next call on it.
func TestKeepAliveLeavesAnAnswerOfKnownLengthAlone(t *testing.T) {
	t.Parallel()
	const answer = "event: message\ndata: {}\n\n"
	rec := httptest.NewRecorder()
	w := &keepAliveWriter{w: rec, header: http.Header{}, atBoundary: true, eager: true,
		timer: time.AfterFunc(time.Hour, func() {})}
	defer w.timer.Stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
	if _, err := io.WriteString(w, answer); err != nil {
		t.Fatal(err)
	}
	w.lastWrite = time.Now().Add(-time.Hour) // the handler stalled before returning
	w.ping(time.Second)
	if got := rec.Body.String(); got != answer {
		t.Errorf("body %q, want the answer alone, %q", got, answer)
	}
}

// TestAStalledCallKeepsItsBodyAndConnection plays both stalls through a
// real server: a call whose handler stalls before it reads its body (so
// KeepAlive opens the stream first) still reads the body whole, and one
// that stalls after writing an answer of known length leaves the
// connection open for the client's next call.
func TestAStalledCallKeepsItsBodyAndConnection(t *testing.T) {
	t.Parallel()
	const answer = "event: message\ndata: {}\n\n"
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stallFirst := r.Header.Get("Stall") == "before"
		if stallFirst {
			time.Sleep(60 * time.Millisecond) // the stream opens meanwhile
		}
		b, err := io.ReadAll(r.Body)
		if err != nil || string(b) != callOne {
			t.Errorf("the handler read %q, %v; want the whole body", b, err)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
		_, _ = io.WriteString(w, answer)
		if !stallFirst {
			time.Sleep(60 * time.Millisecond) // a stall after the answer
		}
	})
	srv := httptest.NewServer(NewCalls().Wrap(KeepAlive(10*time.Millisecond, h)))
	defer srv.Close()
	client := srv.Client()
	call := func(stall string) (reused bool) {
		t.Helper()
		trace := &httptrace.ClientTrace{GotConn: func(c httptrace.GotConnInfo) { reused = c.Reused }}
		ctx := httptrace.WithClientTrace(t.Context(), trace)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(callOne))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Stall", stall)
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("a call stalling %s: %v", stall, err)
		}
		defer res.Body.Close()
		if b, err := io.ReadAll(res.Body); err != nil || !strings.Contains(string(b), answer) {
			t.Errorf("a call stalling %s: body %q, %v", stall, b, err)
		}
		return reused
	}
	call("before")
	call("after")
	if !call("after") {
		t.Error("the connection of an answer of known length was closed; the next call dialled anew")
	}
}

// writesAfterReturn counts what reaches a response after its handler
// returned, which the server forbids.
type writesAfterReturn struct {
	*httptest.ResponseRecorder
	returned, late atomic.Bool
}

func (w *writesAfterReturn) Write(p []byte) (int, error) {
	if w.returned.Load() {
		w.late.Store(true)
	}
	return w.ResponseRecorder.Write(p)
}

// TestNoCommentOutlivesItsCall: the pings run on a timer, not a goroutine
// the handler waits for; once the handler has returned none may write,
// however long the timer would have gone on.
func TestNoCommentOutlivesItsCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const interval = 10 * time.Millisecond
		rec := &writesAfterReturn{ResponseRecorder: httptest.NewRecorder()}
		h := KeepAlive(interval, sse(5*interval, "event: message\ndata: {}\n\n"))
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		rec.returned.Store(true)
		got := rec.Body.String()
		if n := strings.Count(got, ": keep-alive\n\n"); n < 3 {
			t.Errorf("%d comments in 50 ms of silence at a 10 ms interval, want at least 3:\n%q", n, got)
		}
		time.Sleep(100 * interval)
		synctest.Wait()
		if rec.late.Load() {
			t.Errorf("a comment was written after the handler returned:\n%q", rec.Body.String())
		}
	})
}

// timedWriter records when each write came, on the bubble's clock.
type timedWriter struct {
	*httptest.ResponseRecorder
	at []time.Time
}

func (w *timedWriter) Write(p []byte) (int, error) {
	w.at = append(w.at, time.Now())
	return w.ResponseRecorder.Write(p)
}

// TestKeepAliveNeverLeavesMoreThanAnInterval: the stream hears something
// at least every interval, however its events fall. Checked every half
// interval for a full one of silence, it could go one and a half.
func TestKeepAliveNeverLeavesMoreThanAnInterval(t *testing.T) {
	t.Parallel()
	const interval = 5 * time.Second
	synctest.Test(t, func(t *testing.T) {
		events := sse(950*time.Millisecond, firstEvent, firstEvent, firstEvent, firstEvent, firstEvent, firstEvent)
		quiet := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			events.ServeHTTP(w, r)
			time.Sleep(30 * time.Second)
		})
		w := &timedWriter{ResponseRecorder: httptest.NewRecorder()}
		start := time.Now()
		KeepAlive(interval, quiet).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		last := start
		for _, at := range append(w.at, time.Now()) { // the silence at the end counts too
			if gap := at.Sub(last); gap > interval {
				t.Errorf("%v without a write, ending %v after the start; want at most %v", gap, at.Sub(start),
					interval)
			}
			last = at
		}
	})
}
