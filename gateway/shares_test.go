package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/slowbody"
)

// getHeld sends a GET of path on a connection of its own that then reads
// one byte of the answer and no more, so that the gateway holds the rest
// until the connection ends; it returns the connection.
func getHeld(t *testing.T, addr, path string) net.Conn { return getHeldAs(t, addr, path, "") }

// getHeldAs is getHeld sending token.
func getHeldAs(t *testing.T, addr, path, token string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n", path, bearer(token))
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return conn
}

// getWhole sends a GET of path and reads its whole answer: the answer,
// with its body read into a string.
func getWhole(t *testing.T, addr, path string) (*http.Response, string) {
	return getWholeAs(t, addr, path, "")
}

// getWholeAs is getWhole sending token.
func getWholeAs(t *testing.T, addr, path, token string) (*http.Response, string) {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return roundTrip(t, addr, r)
}

// bearer is the header line that sends token, none for "".
func bearer(token string) string {
	if token == "" {
		return ""
	}
	return "Authorization: Bearer " + token + "\r\n"
}

// shareGateway serves the gateway, requiring tokens (none: nil), over
// memory holding a thread of a megabyte (bigThreadPath), its answers
// waiting on clients that read slowly (slowbody.NarrowServer), with the served
// bounds but a wait for a turn of 0.3 s; it returns the address, the
// connections ended, and the bounds.
func shareGateway(t *testing.T, tokens auth.Tokens) (string, <-chan struct{}, bodyBounds) {
	t.Helper()
	bounds := servedBodies
	bounds.requestWait = 300 * time.Millisecond
	srv, closed := slowbody.NarrowServer(t, gatewayOverFor(t, newBigThread(1<<20), tokens, "", bounds))
	return srv.Listener.Addr().String(), closed, bounds
}

// TestAClientsRequestsRunAFewAtATime: a client runs at most requestsEach
// requests on the gateway at once; one more waits its turn and, past
// requestWait, is refused, saying when to come back, while the probes go
// on. Readers just faster than the send bound, each asking for an 8 MB
// thread, held 25 MB of the gateway apiece, as many as they liked.
func TestAClientsRequestsRunAFewAtATime(t *testing.T) {
	t.Parallel()
	const thread = bigThreadPath
	addr, closed, bounds := shareGateway(t, nil)
	held := make([]net.Conn, bounds.requestsEach)
	for i := range held {
		held[i] = getHeld(t, addr, thread)
	}
	began := time.Now()
	res, body := getWhole(t, addr, thread)
	waited := time.Since(began)
	want := fmt.Sprintf("%d requests of this client are running on the gateway, and this one waited 0.3 s", len(held))
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, want) {
		t.Errorf("a request past the client's share: %d %s, want 429 with %q", res.StatusCode, body, want)
	}
	if waited < bounds.requestWait {
		t.Errorf("a request past the client's share was refused after %v, before its wait of %v", waited,
			bounds.requestWait)
	}
	if got := res.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	for _, probe := range probes {
		// /readyz answers 503 here: the fake memory has no health service.
		if res, body := getWhole(t, addr, probe); res.StatusCode == http.StatusTooManyRequests {
			t.Errorf("GET %s while the share is taken: %d %s, want it answered", probe, res.StatusCode, body)
		}
	}
	for len(closed) > 0 {
		<-closed // the refusal's and the probes' connections
	}
	held[0].Close()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("the gateway still held an answer 20 s after its client closed the connection")
	}
	if res, body := getWhole(t, addr, thread); res.StatusCode != http.StatusOK || len(body) < 1<<20 {
		t.Errorf("a request once one of the share has ended: %d, %d bytes; want the thread", res.StatusCode, len(body))
	}
}

// TestEveryRouteTakesItsTurn: every route of the gateway but the probes
// and import waits its turn in its client's share, the gateway's own (an
// export runs for all of its length) as the generated ones; one with a
// body is refused at once, its body unread, for its time to arrive would
// run out as it waited.
func TestEveryRouteTakesItsTurn(t *testing.T) {
	t.Parallel()
	const thread = bigThreadPath
	addr, _, bounds := shareGateway(t, nil)
	for range bounds.requestsEach {
		getHeld(t, addr, "/v1/threads:export")
	}
	const past = "requests of this client are running on the gateway"
	for _, path := range []string{thread, "/v1/threads", "/v1/threads:export", thread + "/history",
		"/v1/threads:browse", thread + "/view", thread + "/summary", "/v1/models", "/openapi.json"} {
		if res, body := getWhole(t, addr, path); res.StatusCode != http.StatusTooManyRequests ||
			!strings.Contains(body, past+", and this one waited") {
			t.Errorf("GET %s while the share is taken: %d %s, want 429 after its wait", path, res.StatusCode, body)
		}
	}
	began := time.Now()
	resolve := httptest.NewRequest("POST", "/v1/models:resolve", strings.NewReader(`{"model":"auto"}`))
	res, body := roundTrip(t, addr, resolve)
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, past+": send it again") {
		t.Errorf("a POST while the share is taken: %d %s, want 429 at once", res.StatusCode, body)
	}
	if waited := time.Since(began); waited >= bounds.requestWait {
		t.Errorf("a POST while the share is taken was answered after %v: it waited", waited)
	}
	imp := httptest.NewRequest("POST", "/v1/threads:import", strings.NewReader(threadLines(1)))
	imp.Header.Set("Content-Type", "application/x-ndjson")
	if res, body := roundTrip(t, addr, imp); strings.Contains(body, past) {
		t.Errorf("an import while the share is taken: %d %s; it has slots of its own", res.StatusCode, body)
	}
}

// roundTrip sends r (its URL's path, body and headers; a body JSON unless
// said otherwise) on a connection of its own and reads the whole answer.
func roundTrip(t *testing.T, addr string, r *http.Request) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r.Host = "localhost"
	r.Close = true
	if r.Body != http.NoBody && r.Header.Get("Content-Type") == "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if err := r.Write(conn); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), r)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.URL.Path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", r.Method, r.URL.Path, err)
	}
	return res, string(body)
}

// TestEachClientHasAShareOfItsOwn: with tokens, one client's share
// taken leaves another's whole: the share is the verified client's.
func TestEachClientHasAShareOfItsOwn(t *testing.T) {
	t.Parallel()
	const thread = bigThreadPath
	const alice, bob = "alice-0123456789abcdef", "bob-0123456789abcdef0"
	addr, _, bounds := shareGateway(t, auth.Tokens{alice: "alice", bob: "bob"})
	for range bounds.requestsEach {
		getHeldAs(t, addr, thread, alice)
	}
	if res, _ := getWholeAs(t, addr, thread, alice); res.StatusCode != http.StatusTooManyRequests {
		t.Errorf("alice's request past her share: %d, want 429", res.StatusCode)
	}
	if res, body := getWholeAs(t, addr, thread, bob); res.StatusCode != http.StatusOK || len(body) < 1<<20 {
		t.Errorf("bob's while alice's share is taken: %d, %d bytes; want the thread", res.StatusCode, len(body))
	}
}

// TestARequestPastTheShareWaitsItsTurn: a client's request past its share
// runs as soon as one of its running requests ends; another client's runs
// at once; one whose client leaves while it waits runs never and holds no
// slot.
func TestARequestPastTheShareWaitsItsTurn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := newShares(2, 10*time.Second)
		release := map[string]chan struct{}{}
		ran := make(chan string, 16)
		h := s.hold(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			id := r.URL.Query().Get("id")
			ran <- id
			if c := release[id]; c != nil {
				<-c
			}
		}))
		answered := make(chan int, 16)
		send := func(ctx context.Context, client, id string) {
			release[id] = make(chan struct{})
			r := httptest.NewRequestWithContext(auth.WithClient(ctx, client), "GET",
				"http://localhost/v1/threads?id="+id, nil)
			go func() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				answered <- rec.Code
			}()
			synctest.Wait()
		}
		ranNow := func() []string {
			var ids []string
			for len(ran) > 0 {
				ids = append(ids, <-ran)
			}
			return ids
		}
		send(t.Context(), "alice", "a1")
		send(t.Context(), "alice", "a2")
		send(t.Context(), "alice", "a3")
		send(t.Context(), "bob", "b1")
		if got := strings.Join(ranNow(), " "); got != "a1 a2 b1" {
			t.Errorf("running with alice's share of 2 taken: %s, want a1 a2 b1", got)
		}
		close(release["a1"])
		synctest.Wait()
		if got := strings.Join(ranNow(), " "); got != "a3" {
			t.Errorf("once a1 ended: %s, want a3 to run", got)
		}
		leaving, leave := context.WithCancel(t.Context())
		send(leaving, "alice", "a4")
		leave()
		synctest.Wait()
		for _, id := range []string{"a2", "a3", "b1"} {
			close(release[id])
		}
		synctest.Wait()
		if got := strings.Join(ranNow(), " "); got != "" {
			t.Errorf("a request whose client left while it waited ran: %s", got)
		}
		send(t.Context(), "alice", "a5")
		send(t.Context(), "alice", "a6")
		if got := strings.Join(ranNow(), " "); got != "a5 a6" {
			t.Errorf("alice's share once all hers ended: %s ran, want a5 a6 (no slot kept by a4)", got)
		}
		close(release["a5"])
		close(release["a6"])
		synctest.Wait()
		for range 7 { // a4's wrote nothing, its client gone: the recorder's 200
			if code := <-answered; code != http.StatusOK {
				t.Errorf("a request answered %d, want 200", code)
			}
		}
	})
}
