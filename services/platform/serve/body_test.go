package serve

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/slowbody"
)

// TestABodyMustArriveInTime: a body sent a byte at a time is cut when its
// time is up, and the handler hears a read error; a body that arrived in
// time leaves the handler as long as it needs, its request's context
// alive, as a long call's stream needs.
func TestABodyMustArriveInTime(t *testing.T) {
	t.Parallel()
	const limit = 300 * time.Millisecond
	srv := httptest.NewServer(BodyDeadline(limit, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			// The network's own words name the server's address; a client
			// reads what a handler makes of the error.
			if !errors.Is(err, ErrBodyLate) || strings.Contains(err.Error(), "127.0.0.1") {
				fmt.Fprintf(w, "cut, but the error is %q", err)
				return
			}
			fmt.Fprint(w, "cut")
			return
		}
		// Longer than the limit, as a model call is.
		select {
		case <-time.After(3 * limit):
			fmt.Fprint(w, "answered")
		case <-r.Context().Done():
			fmt.Fprint(w, "ended")
		}
	})))
	t.Cleanup(srv.Close)

	res, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "answered" {
		t.Errorf("a body sent at once: %q, want the handler's answer after its time", body)
	}

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	done := make(chan string, 1)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			done <- "no answer: " + err.Error()
			return
		}
		body, _ := io.ReadAll(res.Body)
		done <- string(body)
	}()
	for range 20 { // a byte every tenth of a second: two seconds, past the limit
		select {
		case got := <-done:
			if got != "cut" {
				t.Errorf("a body sent a byte at a time: %q, want it cut", got)
			}
			return
		case <-time.After(100 * time.Millisecond):
			_, _ = conn.Write([]byte(" "))
		}
	}
	t.Error("a body sent a byte at a time was still read after two seconds")
}

// TestABodyBrokenOffIsSaidSo: a body whose client ends it before its
// declared length reads as ErrBodyBroken, not in the network's words.
func TestABodyBrokenOffIsSaidSo(t *testing.T) {
	t.Parallel()
	got := make(chan error, 1)
	srv := httptest.NewServer(BodyDeadline(time.Minute, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
	})))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
	_ = conn.(*net.TCPConn).CloseWrite()
	if err := <-got; !errors.Is(err, ErrBodyBroken) || err.Error() != ErrBodyBroken.Error() {
		t.Errorf("reading a body broken off: %v, want ErrBodyBroken", err)
	}
}

// TestAnAnswerBeforeTheBodyLetsTheConnectionGo: a handler that answers
// without reading its request's body (a refusal) has the connection end
// once the answer is out. net/http would first read the rest of the body
// for as long as the client took to send it, holding a connection and its
// descriptor: 20,000 slow refused requests used every descriptor.
func TestAnAnswerBeforeTheBodyLetsTheConnectionGo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(BodyDeadline(time.Minute, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	})))
	t.Cleanup(srv.Close)
	got, err := slowbody.Send(srv.Listener.Addr().String(), "POST / HTTP/1.1\r\nHost: x\r\n", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := (slowbody.Outcome{Status: http.StatusUnauthorized, Answer: "no\n", Let: true}); got != want {
		t.Errorf("a body the handler did not read: %+v, want %+v", got, want)
	}
}

// TestABodyReadToItsLengthKeepsTheConnection: a handler that reads its
// body to the declared length and no further (a JSON decoder) has read
// it all (net/http says io.EOF with the last bytes): its connection is
// kept for the next request, not closed as one with a body left unread.
func TestABodyReadToItsLengthKeepsTheConnection(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(BodyDeadline(time.Minute, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v struct{ A int }
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, v.A)
	})))
	t.Cleanup(srv.Close)
	res, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"A":7}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "7" || res.Close {
		t.Errorf("answered %q, closing the connection %v; want 7 on a connection kept", body, res.Close)
	}
}

// TestARefusalIsNotLostToAReset: a client whose body is still on its way
// when it is refused gets the refusal, not "connection reset": closing a
// socket with bytes unread resets it, and Go's client then reports its
// failed write, not the answer (a quarter of 250 KB calls refused for an
// expired token lost their 401).
func TestARefusalIsNotLostToAReset(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(BodyDeadline(time.Minute, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	})))
	t.Cleanup(srv.Close)
	body := strings.Repeat("a", 250_000) // under the 256 KiB net/http reads of a body left
	const tries = 400
	lost := 0
	for range tries {
		res, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			lost++
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("answered %d, want 401", res.StatusCode)
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d refusals were lost to a reset", lost, tries)
	}
}

// TestEveryServedRequestHasABodyDeadline: on a listener serve.HTTP serves,
// a request its handler answers without reading the body (a 404, a probe's
// path) is answered at once, and its connection let go: only the MCP
// handler had the body deadline, so a POST to any other path of its
// listener, or to the metrics listener, held a connection for as long as
// its client sent a byte now and then.
func TestEveryServedRequestHasABodyDeadline(t *testing.T) {
	t.Parallel()
	slowbody.Refused(t, serveLoopback(t, http.NotFoundHandler()), "POST /x HTTP/1.1\r\nHost: x\r\n",
		http.StatusNotFound)
}

// TestARefusalPastALimitIsNotLostToAReset: a client sending a body far
// past what the handler read before refusing it (8 MiB against MCP's
// 4 MiB) gets the refusal: net/http reads only 256 KiB of what is left,
// and the close that followed reset the connection under the client's
// writes, which Go's client reported instead of the answer.
func TestARefusalPastALimitIsNotLostToAReset(t *testing.T) {
	t.Parallel()
	addr := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.CopyN(io.Discard, r.Body, 4<<20)
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	}))
	body := strings.Repeat("a", 8<<20)
	const tries = 10
	var lost []error
	for i := range tries {
		var r io.Reader = strings.NewReader(body)
		if i%2 == 0 {
			r = struct{ io.Reader }{r} // no length known: sent chunked
		}
		res, err := http.Post("http://"+addr, "application/json", r)
		if err != nil {
			lost = append(lost, err)
			continue
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("try %d: %d, want 413", i, res.StatusCode)
		}
	}
	// The drain is bounded in time (drainTime): on a machine busy with
	// every package's tests, a client may now and then not send the rest
	// within it. Without the drain, every try is lost.
	if len(lost) > 2 {
		t.Errorf("%d of %d refusals were lost to a reset, the first: %v", len(lost), tries, lost[0])
	}
}
