package gateway

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/hostguard"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

const (
	opsToken    = "ops-0123456789abcdef"
	testVersion = "v1.2.3-test"
)

// newTestGateway is the gateway in front of services that are not there:
// every request the guards let through fails at the backend (503), so a
// 403 or 415 shows the guard refused it first.
func newTestGateway(t *testing.T, tokens auth.Tokens) (http.Handler, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := lis.Addr().String()
	lis.Close()
	conn, err := grpc.NewClient(dead, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	hosts, err := hostguard.Load(func(string) string { return "zen.internal" })
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(t.Context(), Conns{Memory: conn, Router: conn, Executor: conn}, Settings{Tokens: tokens, Hosts: hosts,
		Version: testVersion})
	if err != nil {
		t.Fatal(err)
	}
	return serve.BodyDeadline(serve.BodyTime, h), dead // as serve.HTTP serves it
}

func TestGuards(t *testing.T) {
	t.Parallel()
	h, _ := newTestGateway(t, nil)
	const id = "/v1/threads/0b7c7f2e-5d0c-4c1e-9a57-2d4c0c1b2a11"
	for _, tc := range []struct {
		name, method, path, host, body string
		header                         map[string]string
		want                           int
		wantMsg                        string
	}{
		{"rebound Host", "GET", "/v1/threads", "attacker.example", "", nil, 403, "ZEN_ALLOWED_HOSTS"},
		{"rebound Host on export", "GET", "/v1/threads:export", "attacker.example:8081", "", nil, 403,
			"ZEN_ALLOWED_HOSTS"},
		{"listed Host", "GET", "/v1/threads", "zen.internal:8081", "", nil, 503, ""},
		{"probe with a pod IP", "GET", "/healthz", "10.1.2.3:8081", "", nil, 200, "ok"},
		{"text/plain import", "POST", "/v1/threads:import", "localhost", "{}",
			map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type: application/json"},
		{"import without a type", "POST", "/v1/threads:import", "localhost", "{}", nil, 415,
			"Content-Type: application/json"},
		{"multipart import", "POST", "/v1/threads:import", "localhost", "{}",
			map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, 415,
			"Content-Type: application/json"},
		{"ndjson import", "POST", "/v1/threads:import", "localhost", "",
			map[string]string{"Content-Type": "application/x-ndjson"}, 503, ""},
		{"json import", "POST", "/v1/threads:import", "localhost", "",
			map[string]string{"Content-Type": "application/json; charset=utf-8"}, 503, ""},
		{"ndjson branch", "POST", id + ":branch", "localhost", "{}",
			map[string]string{"Content-Type": "application/x-ndjson"}, 415, "Content-Type: application/json"},
		{"text/plain branch", "POST", id + ":branch", "localhost", "{}",
			map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type: application/json"},
		{"json branch", "POST", id + ":branch", "localhost", "{}",
			map[string]string{"Content-Type": "application/json"}, 503, ""},
		{"text/plain resolve", "POST", "/v1/models:resolve", "localhost", `{"model":"auto"}`,
			map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type: application/json"},
		{"form delete by override", "POST", id, "localhost", "",
			map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-HTTP-Method-Override": "DELETE"},
			415, "Content-Type: application/json"},
		{"form delete", "DELETE", id, "localhost", "a=b",
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415,
			"Content-Type: application/json"},
		{"delete without a body", "DELETE", id, "localhost", "", nil, 503, ""},
		{"delete with a body but no type", "DELETE", id, "localhost", "{}", nil, 415,
			"Content-Type: application/json"},
		{"foreign Origin", "POST", id + ":branch", "localhost", "{}",
			map[string]string{"Content-Type": "application/json", "Origin": "https://attacker.example"}, 403,
			"cross-origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.HasSuffix(tc.path, ":import") {
				// A client runs one import at a time, and without tokens every
				// caller is one client: two at once, one is refused (429).
				t.Parallel()
			}
			req := httptest.NewRequest(tc.method, "http://"+tc.host+tc.path, strings.NewReader(tc.body))
			req.Host = tc.host
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.wantMsg) {
				t.Errorf("%s %s: %d %s, want %d with %q", tc.method, tc.path, rec.Code, rec.Body, tc.want, tc.wantMsg)
			}
			if rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") != "1" {
				t.Errorf("a backend not there: Retry-After %q, want 1", rec.Header().Get("Retry-After"))
			}
			if rec.Code == http.StatusUnsupportedMediaType && rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("the refusal should be JSON, got %q", rec.Header().Get("Content-Type"))
			}
		})
	}
}

func TestReadinessHidesAddresses(t *testing.T) {
	t.Parallel()
	h, dead := newTestGateway(t, auth.Tokens{opsToken: "ops"})
	for _, tc := range []struct {
		name, bearer string
		withDetail   bool
	}{
		{"no token", "", false},
		{"wrong token", "wrong-0123456789abcdef", false},
		{"valid token", opsToken, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest("GET", "http://10.1.2.3:8081/readyz", nil)
			if tc.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var got map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusServiceUnavailable {
				t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
			}
			detail := got["detail"]
			delete(got, "detail")
			want := map[string]string{"status": "not ready", "missing": "memory", "reason": "memory is unreachable"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("readiness (-want +got):\n%s", diff)
			}
			if strings.Contains(rec.Body.String(), dead) != tc.withDetail || (detail != "") != tc.withDetail {
				t.Errorf("address of memory shown = %v, want %v: %s", !tc.withDetail, tc.withDetail, rec.Body)
			}
		})
	}
}

// A path or a query that is not UTF-8 is refused as the client's mistake
// (400), on every route: a generated route sent it to memory's or the
// router's gRPC client, which cannot marshal it, and answered 500 in gRPC's
// own words.
func TestPathsAndQueriesThatAreNotUTF8AreRefused(t *testing.T) {
	t.Parallel()
	h, _ := newTestGateway(t, nil)
	for _, path := range []string{"/v1/models/%ff%fe", "/v1/threads?tool_name=%ff", "/v1/threads?%ff=chat",
		"/v1/threads/0b7c7f2e-5d0c-4c1e-9a57-2d4c0c1b2a11:view?model=%c3",
		"/v1/models/" + strings.Repeat("%ff", 100_000)} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost"+path, nil))
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "UTF-8") ||
			strings.Contains(rec.Body.String(), "grpc") || strings.Contains(rec.Body.String(), "the the") ||
			rec.Body.Len() > 2<<10 {
			t.Errorf("GET %.80s: %d %.300s (%d bytes); want 400 saying it is not UTF-8, quoting little", path,
				rec.Code, rec.Body, rec.Body.Len())
		}
	}
}
