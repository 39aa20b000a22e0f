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

	"github.com/zenmcp/zen/services/platform/hostguard"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// TestBodiesHaveASize: a route's body over maxJSONBody is refused (413,
// naming the limit) before the gateway holds it, whether it declares its
// length or is chunked; one at the limit goes on. Without the bound, the
// generated routes decoded a body of any size into memory.
func TestBodiesHaveASize(t *testing.T) {
	t.Parallel()
	h, _ := newTestGateway(t, nil)
	const id = "/v1/threads/0b7c7f2e-5d0c-4c1e-9a57-2d4c0c1b2a11"
	over := `{"model":"` + strings.Repeat("a", maxJSONBody) + `"}`
	at := `{"model":"` + strings.Repeat("a", maxJSONBody-len(`{"model":""}`)) + `"}`
	for _, tc := range []struct {
		name, method, path, body string
		chunked                  bool
		want                     int
	}{
		{"resolve over", "POST", "/v1/models:resolve", over, false, http.StatusRequestEntityTooLarge},
		{"resolve over, chunked", "POST", "/v1/models:resolve", over, true, http.StatusRequestEntityTooLarge},
		{"branch over, chunked", "POST", id + ":branch", over, true, http.StatusRequestEntityTooLarge},
		{"delete over", "DELETE", id, over, false, http.StatusRequestEntityTooLarge},
		{"resolve at the limit", "POST", "/v1/models:resolve", at, true, http.StatusServiceUnavailable},
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
			if rec.Code != tc.want {
				t.Fatalf("%s %s with %d bytes: %d %.300s, want %d", tc.method, tc.path, len(tc.body), rec.Code,
					rec.Body, tc.want)
			}
			if tc.want == http.StatusRequestEntityTooLarge && !strings.Contains(rec.Body.String(), fmt.Sprint(maxJSONBody)) {
				t.Errorf("the refusal should name the limit: %s", rec.Body)
			}
		})
	}
}

// TestBodiesMustArriveInTime: a body sent a byte at a time is cut when its
// time is up and the request answered, on a generated route (which read
// it for as long as the client liked) and on import.
func TestBodiesMustArriveInTime(t *testing.T) {
	t.Parallel()
	const limit = 300 * time.Millisecond
	srv := httptest.NewServer(gatewayWithBodies(t, bodyBounds{size: maxJSONBody, time: limit, importTime: limit}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ path, contentType string }{
		{"/v1/models:resolve", "application/json"},
		{"/v1/threads:import", "application/x-ndjson"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: %s\r\nContent-Length: 100\r\n\r\n{",
				tc.path, tc.contentType)
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
			for range 30 { // a byte every tenth of a second: three seconds, well past the limit
				select {
				case got := <-done:
					if !strings.HasPrefix(got, "400 ") || !strings.Contains(got, "read") {
						t.Errorf("a body sent a byte at a time: %q, want 400 saying the body was not read", got)
					}
					return
				case <-time.After(100 * time.Millisecond):
					_, _ = conn.Write([]byte(" "))
				}
			}
			t.Error("a body sent a byte at a time was still read after three seconds")
		})
	}
}

// gatewayWithBodies is newTestGateway's gateway with bodies held to b.
func gatewayWithBodies(t *testing.T, b bodyBounds) http.Handler {
	t.Helper()
	conn, err := grpc.NewClient("127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	hosts, err := hostguard.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	h, err := newGateway(t.Context(), Conns{Memory: conn, Router: conn, Executor: conn}, nil, hosts, testVersion,
		TraceURL{}, b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
