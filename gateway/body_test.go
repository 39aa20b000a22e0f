package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
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
	srv := httptest.NewServer(gatewayOverWith(t, &importingMemory{got: make(chan int, 1)}, "",
		bodyBounds{size: maxJSONBody, time: limit, importTime: limit}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ path, contentType, want string }{
		{"/v1/models:resolve", "application/json", "did not arrive within 0.3 s"},
		{"/v1/threads:import", "application/x-ndjson", "did not arrive within 0.3 s: send it as fast as it is " +
			"read; nothing was imported"},
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
	srv := httptest.NewServer(gatewayOverWith(t, mem, "",
		bodyBounds{size: maxJSONBody, time: 300 * time.Millisecond, importTime: 20 * time.Second}))
	t.Cleanup(srv.Close)
	line := threadLines(1)
	conn := dialGateway(t, srv)
	fmt.Fprintf(conn, "POST /v1/threads:import HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-ndjson\r\n"+
		"Content-Length: %d\r\n\r\n", len(line))
	for rest := line; rest != ""; { // ten bytes a tenth of a second: past the other routes' time
		time.Sleep(100 * time.Millisecond)
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
	done := make(chan string, 1)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			done <- "no answer: " + err.Error()
			return
		}
		body, _ := io.ReadAll(res.Body)
		done <- fmt.Sprint(res.StatusCode, " ", string(body))
	}()
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
