package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/slowbody"
)

// paceLoopback serves Paced(d, h) on loopback until the test ends, the
// kernel keeping little of what it sends (slowbody.NarrowServer), and
// returns its address.
func paceLoopback(t *testing.T, d time.Duration, h http.Handler) string {
	t.Helper()
	srv, _ := slowbody.NarrowServer(t, Paced(d, h))
	return srv.Listener.Addr().String()
}

// sizes answers /big with big bytes and anything else with "ok".
func sizes(big int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			_, _ = w.Write([]byte(strings.Repeat("a", big)))
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
}

// get sends a GET for path on conn and reads its whole answer.
func get(t *testing.T, conn net.Conn, r *bufio.Reader, path string) string {
	t.Helper()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", path)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: read %d bytes: %v", path, len(body), err)
	}
	return string(body)
}

// An answer is paced: one its client stops reading ends once a piece has
// waited d, and its handler learns so.
func TestAnAnswerNobodyReadsEnds(t *testing.T) {
	t.Parallel()
	ended := make(chan error, 1)
	addr := paceLoopback(t, 200*time.Millisecond, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, err := w.Write([]byte(strings.Repeat("a", 8<<20)))
		ended <- err
	}))
	stalledReader(t, addr)
	select {
	case err := <-ended:
		if err == nil {
			t.Error("an answer nobody read went out whole")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("an answer nobody reads was still being written after 20 s")
	}
}

// The deadline a large answer left on its connection does not fail the
// small answer after it, however long the connection waited between
// (net/http lifts it once an answer has ended).
func TestASmallAnswerAfterALargeOneGoesOut(t *testing.T) {
	t.Parallel()
	// Each piece of the large answer has d to go out: 100 ms cut it on a
	// clean clone's CI, two cores busy with other packages' tests.
	const d = 500 * time.Millisecond
	addr := paceLoopback(t, d, sizes(1<<20))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	if got := get(t, conn, r, "/big"); len(got) != 1<<20 {
		t.Fatalf("GET /big: %d bytes, want %d", len(got), 1<<20)
	}
	// Real time must pass for the kernel's deadline to: past the one the
	// large answer's end left.
	<-time.After(3 * d)
	if got := get(t, conn, r, "/small"); got != "ok" {
		t.Errorf("GET /small after /big = %q, want ok", got)
	}
}

// stalledReader asks addr for / and reads the first byte of the answer,
// and no more, until the test ends.
func stalledReader(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTCP("tcp", nil, tcpAddr(t, addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetReadBuffer(4 << 10)
	fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	_, _ = conn.Read(make([]byte, 1)) // the answer has begun; no more is read
}

func tcpAddr(t *testing.T, addr string) *net.TCPAddr {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// An answer that is cut (AnswerOf its request's context) ends at once,
// however long its pieces may wait for a slow client: the gateway cuts the
// reader of a thread that holds room others wait for. What went out of it
// is counted.
func TestACutAnswerEndsAtOnce(t *testing.T) {
	t.Parallel()
	ended, answers := make(chan error, 1), make(chan Answer, 1)
	addr := paceLoopback(t, time.Hour, Cuttable(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer := AnswerOf(r.Context())
		answer.Mark()
		answers <- answer
		_, _ = w.Write([]byte("first"))
		_, err := w.Write([]byte(strings.Repeat("a", 8<<20)))
		ended <- err
	})))
	stalledReader(t, addr)
	answer := <-answers
	if answer == nil {
		t.Fatal("a Cuttable handler under Paced has no answer to cut")
	}
	answer.Cut()
	select {
	case err := <-ended:
		if err == nil {
			t.Error("a cut answer went out whole")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a cut answer was still being written after 20 s")
	}
	if n := answer.Sent(); n < int64(len("first")) || n >= 8<<20 {
		t.Errorf("%d bytes sent of a cut answer, want its start and not all", n)
	}
	if answer.Moved().IsZero() {
		t.Error("an answer that went out after its Mark has not moved")
	}
	if AnswerOf(t.Context()) != nil {
		t.Error("a context no Cuttable handler made has an answer")
	}
}

// An answer cut between two writes, or while its handler waits for what
// it is to send, does not end as if whole: its connection drops, and the
// handler's context ends. An export cut so once read as complete with
// threads missing, its client none the wiser.
func TestAnAnswerCutBetweenWritesDoesNotEndWhole(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	answered := make(chan error, 1)
	addr := paceLoopback(t, time.Hour, Cuttable(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "line1\n")
		_ = http.NewResponseController(w).Flush()
		AnswerOf(r.Context()).Cut()
		<-r.Context().Done() // what it waited for gives up
		answered <- context.Cause(r.Context())
		<-release
		_, _ = io.WriteString(w, "line2\n")
	})))
	res, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := <-answered; !errors.Is(err, errCut) {
		t.Errorf("the cut handler's context ended with %v, want errCut", err)
	}
	close(release)
	body, err := io.ReadAll(res.Body)
	if err == nil {
		t.Errorf("a cut answer read as whole: %q", body)
	}
}
