package slowbody

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// Declared is the length a body is said to have: under the 256 KiB that
// net/http reads of a body its handler left, so that a server which reads
// it waits for all of it (one past that bound is not read at all).
const Declared = 1000

// Every is how often a byte of the body goes out.
const Every = 50 * time.Millisecond

// Outcome is what a server did with a request whose body came slowly.
type Outcome struct {
	// Status is the answer's status code: 0 if none came within the wait,
	// or the connection ended without one.
	Status int
	// Answer is the answer's body, or why none came.
	Answer string
	// Let is whether the server ended the connection within the wait once
	// it had answered, while the body was still coming. A server that does not
	// reads what is left of the body first, and holds the connection for
	// as long as the client keeps sending.
	Let bool
}

// Send writes head (a request line and headers, each ending in CRLF, and no
// Content-Length) to addr with a body declared to be Declared bytes, sends
// the body a byte every Every, and waits up to wait for the answer, then
// up to wait for the server to end the connection.
func Send(addr, head string, wait time.Duration) (Outcome, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return Outcome{}, err
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "%sContent-Length: %d\r\n\r\n{", head, Declared); err != nil {
		return Outcome{}, err
	}
	answered := make(chan Outcome, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		r := bufio.NewReader(conn)
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			answered <- Outcome{Answer: "no answer: " + err.Error()}
			return
		}
		body, _ := io.ReadAll(res.Body)
		answered <- Outcome{Status: res.StatusCode, Answer: string(body)}
		_, _ = io.Copy(io.Discard, r) // until the server ends the connection
	}()
	out, ok := trickle(conn, answered, wait)
	if !ok || out.Status == 0 {
		return out, nil
	}
	_, out.Let = trickle(conn, ended, wait)
	return out, nil
}

// trickle sends a byte of the body every Every until done has something or
// wait has passed.
func trickle[T any](conn net.Conn, done <-chan T, wait time.Duration) (T, bool) {
	tick := time.NewTicker(Every)
	defer tick.Stop()
	timeout := time.After(wait)
	for {
		select {
		case v := <-done:
			return v, true
		case <-timeout:
			var zero T
			return zero, false
		case <-tick.C:
			_, _ = conn.Write([]byte(" ")) // fails once the server has gone: it is still waited for
		}
	}
}

// Refused fails t unless the server at addr answers head's request with
// want, while its body is still coming, and then lets the connection go
// (each within five seconds).
func Refused(t testing.TB, addr, head string, want int) {
	t.Helper()
	got, err := Send(addr, head, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != want || !got.Let {
		t.Errorf("%+v, want %d, then the connection let go", got, want)
	}
}
