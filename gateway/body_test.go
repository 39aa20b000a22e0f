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
	"sync/atomic"
	"testing"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/slowbody"
	"google.golang.org/grpc"
)

// TestBodiesHaveASize: a generated route's body over maxJSONBody is
// refused (413, naming the limit) before the gateway holds it, whether it
// declares its length or is chunked; one at the limit goes on. Without the
// bound, the generated routes decoded a body of any size into memory.
func TestBodiesHaveASize(t *testing.T) {
	t.Parallel()
	h, _ := newTestGateway(t, nil)
	const id = "/v1/threads/0b7c7f2e-5d0c-4c1e-9a57-2d4c0c1b2a11"
	over := `{"model":"` + strings.Repeat("a", maxJSONBody) + `"}`
	at := `{"model":"` + strings.Repeat("a", maxJSONBody-len(`{"model":""}`)) + `"}`
	for _, tc := range []struct {
		name, method, path, body string
		chunked, refused         bool
	}{
		{"resolve over", "POST", "/v1/models:resolve", over, false, true},
		{"resolve over, chunked", "POST", "/v1/models:resolve", over, true, true},
		{"branch over, chunked", "POST", id + ":branch", over, true, true},
		{"delete over", "DELETE", id, over, false, true},
		{"resolve at the limit", "POST", "/v1/models:resolve", at, false, false},
		{"resolve at the limit, chunked", "POST", "/v1/models:resolve", at, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // no length to read ahead
			}
			req := httptest.NewRequest(tc.method, "http://localhost"+tc.path, body)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch refused := rec.Code == http.StatusRequestEntityTooLarge; {
			case refused != tc.refused:
				t.Fatalf("%s %s with %d bytes: %d %.300s, refused %v, want %v", tc.method, tc.path,
					len(tc.body), rec.Code, rec.Body, refused, tc.refused)
			case refused && !strings.Contains(rec.Body.String(), fmt.Sprint("at most ", maxJSONBody, " bytes")):
				t.Errorf("the refusal should name the limit: %s", rec.Body)
			}
		})
	}
}

// TestBodiesMustArriveInTime: a body sent a byte at a time is cut when its
// time is up and the request answered, saying so, on a generated route
// (which read it for as long as the client liked) and on import.
func TestBodiesMustArriveInTime(t *testing.T) {
	t.Parallel()
	const limit = 300 * time.Millisecond
	bounds := servedBodies
	bounds.time, bounds.importTime = limit, limit
	srv := httptest.NewServer(gatewayOverWith(t, &importingMemory{got: make(chan int, 1)}, "", bounds))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ path, contentType, want string }{
		{"/v1/models:resolve", "application/json", "did not arrive in its time (0.3 s)"},
		{"/v1/threads:import", "application/x-ndjson", "did not arrive in its time (0.3 s): send it as fast as " +
			"it is read; nothing was imported"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			got := sendSlowly(t, srv, tc.path, tc.contentType, 30)
			if !strings.HasPrefix(got, "400 ") || !strings.Contains(got, tc.want) {
				t.Errorf("a body sent a byte at a time: %q, want 400 with %q", got, tc.want)
			}
			if strings.Contains(got, "127.0.0.1") {
				t.Errorf("the answer names the gateway's address: %q", got)
			}
		})
	}
}

// TestAnImportHasTimeOfItsOwn: an import may take importTime to arrive,
// longer than another route's body.
func TestAnImportHasTimeOfItsOwn(t *testing.T) {
	t.Parallel()
	mem := &importingMemory{got: make(chan int, 1)}
	bounds := servedBodies
	bounds.time, bounds.importTime = 300*time.Millisecond, 20*time.Second
	srv := httptest.NewServer(gatewayOverWith(t, mem, "", bounds))
	t.Cleanup(srv.Close)
	line := threadLines(1)
	conn := dialGateway(t, srv)
	fmt.Fprintf(conn, "POST /v1/threads:import HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-ndjson\r\n"+
		"Content-Length: %d\r\n\r\n", len(line))
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for rest := line; rest != ""; { // ten bytes a tenth of a second: past the other routes' time
		<-tick.C
		n := min(10, len(rest))
		_, _ = io.WriteString(conn, rest[:n])
		rest = rest[n:]
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Errorf("an import sent over a second: %d %s, want it imported", res.StatusCode, body)
	}
}

// TestAnImportBrokenOffSaysSo: an import whose body ends before its
// declared length is told so, not that its cut line is no thread.
func TestAnImportBrokenOffSaysSo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(gatewayOver(t, &importingMemory{got: make(chan int, 1)}, ""))
	t.Cleanup(srv.Close)
	conn := dialGateway(t, srv)
	line := threadLines(2)
	fmt.Fprintf(conn, "POST /v1/threads:import HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-ndjson\r\n"+
		"Content-Length: %d\r\n\r\n%s", len(line)+100, line[:len(line)-20])
	_ = conn.(*net.TCPConn).CloseWrite()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if want := "broken off before its end"; res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(string(body), want) {
		t.Errorf("an import broken off: %d %s, want 400 with %q", res.StatusCode, body, want)
	}
}

func dialGateway(t *testing.T, srv *httptest.Server) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// sendSlowly posts a body of declared length 100 to path a byte every
// tenth of a second, at most bytes of it, and returns the answer's status
// and body, or what went wrong.
func sendSlowly(t *testing.T, srv *httptest.Server, path, contentType string, bytes int) string {
	t.Helper()
	conn := dialGateway(t, srv)
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\nContent-Length: 100\r\n\r\n{",
		path, contentType)
	done := answerOf(conn)
	for range bytes {
		select {
		case got := <-done:
			return got
		case <-time.After(100 * time.Millisecond):
			_, _ = conn.Write([]byte(" "))
		}
	}
	return fmt.Sprintf("still read after %d bytes", bytes)
}

// TestARefusalDoesNotWaitForTheBody: a request refused before its body has
// all come is answered at once, not once the rest has come or its time is
// up: net/http reads up to 256 KiB more of a body before it answers, unless
// the connection is to close.
func TestARefusalDoesNotWaitForTheBody(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(gatewayOver(t, &importingMemory{got: make(chan int, 1)}, ""))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ name, head, body, want string }{
		{"an import past its threads", "POST /v1/threads:import HTTP/1.1\r\nContent-Type: application/x-ndjson\r\n",
			threadLines(maxImportThreads + 1), fmt.Sprint("at most ", maxImportThreads, " threads")},
		{"a body past its size", "POST /v1/models:resolve HTTP/1.1\r\nContent-Type: application/json\r\n",
			`{"model":"` + strings.Repeat("a", maxJSONBody), fmt.Sprint("at most ", maxJSONBody, " bytes")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn := dialGateway(t, srv)
			// Chunked, and never ended: the rest is on its way.
			fmt.Fprintf(conn, "%sHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n",
				tc.head, len(tc.body), tc.body)
			select {
			case got := <-answerOf(conn):
				if !strings.Contains(got, tc.want) {
					t.Errorf("answered %q, want %q", got, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Error("no answer after ten seconds: the refusal waits for the body")
			}
		})
	}
}

// TestARefusedBodyIsNotWaitedFor: a request refused while its body is
// still coming (no token, a Host not answered to) has its connection let
// go once answered; net/http read the rest of the body first, up to the
// body's time, and a client that kept sending held the connection.
func TestARefusedBodyIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	h, _ := newTestGateway(t, auth.Tokens{opsToken: "ops"})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, head string
		want       int
	}{
		{"no token", "POST /v1/models:resolve HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n",
			http.StatusUnauthorized},
		{"a Host not answered to", "POST /v1/models:resolve HTTP/1.1\r\nHost: attacker.example\r\n" +
			"Content-Type: application/json\r\nAuthorization: Bearer " + opsToken + "\r\n", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			slowbody.Refused(t, srv.Listener.Addr().String(), tc.head, tc.want)
		})
	}
}

// TestBodiesReadAtOnceHaveABound: past reading requests with a body at
// once, another is told to come back (429), so that many slow bodies of
// 1 MiB cannot hold the gateway's memory; once one has ended, the next
// goes in. A GET's body is not read, and takes no slot. (Each client's
// requests are bound by its share: TestAClientsRequestsRunAFewAtATime.)
func TestBodiesReadAtOnceHaveABound(t *testing.T) {
	t.Parallel()
	h := boundBodies(bodyBounds{size: maxJSONBody, time: time.Minute, reading: 3},
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	post := func(client string, body io.Reader) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "http://localhost/v1/models:resolve", body)
		r = r.WithContext(auth.WithClient(r.Context(), client))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	answered := make(chan int, 3)
	hold := func(client string) *io.PipeWriter {
		body, sender := io.Pipe()
		go func() { answered <- post(client, body).Code }()
		_, _ = io.WriteString(sender, "{") // returns once the body is being read
		return sender
	}
	small := func() io.Reader { return strings.NewReader(`{"model":"auto"}`) }
	held := []*io.PipeWriter{hold("alice"), hold("alice"), hold("bob")}
	if rec := post("carol", small()); rec.Code != http.StatusTooManyRequests ||
		!strings.Contains(rec.Body.String(), "3 requests with a body are running on this gateway") ||
		rec.Header().Get("Retry-After") == "" {
		t.Errorf("carol's while 3 run: %d %s (Retry-After %q), want 429 naming the gateway's bound, "+
			"saying when to try again", rec.Code, rec.Body, rec.Header().Get("Retry-After"))
	}
	get := httptest.NewRequest("GET", "http://localhost/v1/models", small())
	get = get.WithContext(auth.WithClient(get.Context(), "carol"))
	rec := httptest.NewRecorder()
	if h.ServeHTTP(rec, get); rec.Code != http.StatusNoContent {
		t.Errorf("carol's GET with a body while 3 run: %d %s, want it served", rec.Code, rec.Body)
	}
	_ = held[0].Close()
	if code := <-answered; code != http.StatusNoContent {
		t.Errorf("a body read whole: %d", code)
	}
	if rec := post("carol", small()); rec.Code != http.StatusNoContent {
		t.Errorf("carol's once one has ended: %d %s", rec.Code, rec.Body)
	}
	_ = held[1].Close()
	_ = held[2].Close()
	<-answered
	<-answered
}

// TestNoBodyIsReadForWhomTheGatewayDoesNotServe: the probes, which skip
// the token and the Host check, and a request without a token read none
// of a body: a client with no token could otherwise make the gateway hold
// 1 MiB a connection.
func TestNoBodyIsReadForWhomTheGatewayDoesNotServe(t *testing.T) {
	t.Parallel()
	h, _ := newTestGateway(t, auth.Tokens{opsToken: "ops"})
	for _, tc := range []struct{ method, url string }{
		{"GET", "http://attacker.example/healthz"},
		{"POST", "http://attacker.example/readyz"},
		{"POST", "http://localhost/v1/models:resolve"},
	} {
		t.Run(tc.method+" "+tc.url, func(t *testing.T) {
			t.Parallel()
			body := &repeated{s: "a"}
			r := httptest.NewRequest(tc.method, tc.url, io.LimitReader(body, 2*maxJSONBody))
			r.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(httptest.NewRecorder(), r)
			if body.read != 0 {
				t.Errorf("%d bytes of the body were read, want none", body.read)
			}
		})
	}
}

// endlessExport lists as many threads as an export takes, each of them
// large: one id, listed again and again under the names the gateway
// tells apart.
type endlessExport struct {
	fakeMemory
	listed atomic.Int64
}

func (e *endlessExport) ListThreads(context.Context, *memoryv1.ListThreadsRequest) (*memoryv1.ListThreadsResponse,
	error) {
	page := &memoryv1.ListThreadsResponse{NextPageToken: "more"}
	for range 100 {
		n := e.listed.Add(1)
		if n > maxExportThreads {
			page.NextPageToken = ""
			break
		}
		page.Threads = append(page.Threads, &memoryv1.ThreadSummary{ThreadId: fmt.Sprintf("%s-%d", endlessID, n)})
	}
	return page, nil
}

const endlessID = "00000000-0000-4000-8000-000000000001"

func (e *endlessExport) GetThread(context.Context, *memoryv1.GetThreadRequest) (*memoryv1.GetThreadResponse, error) {
	return &memoryv1.GetThreadResponse{Thread: &memoryv1.Thread{ThreadId: endlessID}, Weight: 64 << 10}, nil
}

func (e *endlessExport) ExportThreads(_ *memoryv1.ExportThreadsRequest,
	stream grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse]) error {
	return stream.Send(&memoryv1.ExportThreadsResponse{Thread: &memoryv1.Thread{ThreadId: endlessID,
		ToolName: strings.Repeat("a", 64<<10)}})
}

// TestAnExportNobodyReadsEnds: an export whose client stops reading ends
// once a piece has waited sendTime to go out, and with it its reads of
// threads; it held memory's stream and the lines waiting to go out for as
// long as the client kept its connection.
func TestAnExportNobodyReadsEnds(t *testing.T) {
	t.Parallel()
	mem := &endlessExport{}
	bounds := servedBodies
	bounds.sendTime = 300 * time.Millisecond
	gw := gatewayOverWith(t, mem, "", bounds)
	ended := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended) // the one request
		gw.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	conn := dialGateway(t, srv)
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprint(conn, "GET /v1/threads:export HTTP/1.1\r\nHost: localhost\r\n\r\n")
	_, _ = conn.Read(make([]byte, 1)) // the export has begun; no more is read
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("an export nobody reads still ran after 20 s")
	}
}

// answerOf reads the answer on conn: its status and body, or what went
// wrong, once it has come.
func answerOf(conn net.Conn) <-chan string {
	answered := make(chan string, 1)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- "no answer: " + err.Error()
			return
		}
		body, _ := io.ReadAll(res.Body)
		answered <- fmt.Sprint(res.StatusCode, " ", string(body))
	}()
	return answered
}
