package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/refused"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

const readyToken = "ready-0123456789abcdef"

func TestReadyHandler(t *testing.T) {
	t.Parallel()
	down := &NotReadyError{Role: "memory", Reason: "is unreachable", Detail: "at 10.0.0.9:9090: connection refused"}
	tokens := auth.Tokens{readyToken: "ops"}
	for _, tc := range []struct {
		name   string
		tokens auth.Tokens
		bearer string
		err    error
		code   int
		want   map[string]string
	}{
		{"ready", tokens, "", nil, 200, map[string]string{"status": "ready"}},
		{"not ready, no token", tokens, "", down, 503,
			map[string]string{"status": "not ready", "missing": "memory", "reason": "memory is unreachable"}},
		{"not ready, wrong token", tokens, "wrong-0123456789abcdef", down, 503,
			map[string]string{"status": "not ready", "missing": "memory", "reason": "memory is unreachable"}},
		{"not ready, auth off", nil, readyToken, down, 503,
			map[string]string{"status": "not ready", "missing": "memory", "reason": "memory is unreachable"}},
		{"not ready, valid token", tokens, readyToken, down, 503, map[string]string{
			"status": "not ready", "missing": "memory", "reason": "memory is unreachable",
			"detail": "memory is unreachable at 10.0.0.9:9090: connection refused",
		}},
		{"other error, no token", tokens, "", errors.New("dial 10.0.0.9:9090"), 503,
			map[string]string{"status": "not ready", "reason": "not ready"}},
		{"other error, valid token", tokens, readyToken, errors.New("dial 10.0.0.9:9090"), 503,
			map[string]string{"status": "not ready", "reason": "not ready", "detail": "dial 10.0.0.9:9090"}},
		{"ready with a warning", tokens, "", Warn("memory", []string{"keeps threads in a Redis without persistence"}), 200,
			map[string]string{"status": "ready", "warning": "memory keeps threads in a Redis without persistence"}},
		{"ready with two warnings", nil, "", Warn("memory", []string{"is at risk", "lost its data"}), 200,
			map[string]string{"status": "ready", "warning": "memory is at risk; memory lost its data"}},
		{"ready, no warnings", nil, "", Warn("memory", nil), 200, map[string]string{"status": "ready"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := ReadyHandler(tc.tokens, func(context.Context) error { return tc.err })
			req := httptest.NewRequest("GET", "/readyz", nil)
			if tc.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var got map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tc.code {
				t.Errorf("code %d, want %d", rec.Code, tc.code)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckAllNamesTheRole(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	deadAddr := refused.Addr(t)

	for _, tc := range []struct {
		name, addr, wantReason string
	}{
		{"unreachable", deadAddr, "is unreachable"},
		{"not serving", lis.Addr().String(), "is NOT_SERVING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Dial: what the roles use, which checks health itself and
			// calls no server that says NOT_SERVING.
			conn, err := Dial(tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			err = CheckAll(t.Context(), []Dependency{{Name: "memory", Conn: conn}})
			var nr *NotReadyError
			if !errors.As(err, &nr) {
				t.Fatalf("CheckAll = %v, want a *NotReadyError", err)
			}
			if nr.Role != "memory" || nr.Reason != tc.wantReason || strings.Contains(nr.Public(), "127.0.0.1") {
				t.Errorf("public part %q (role %q, reason %q) should name the role, say %q and name no address",
					nr.Public(), nr.Role, nr.Reason, tc.wantReason)
			}
			if !strings.Contains(nr.Error(), tc.addr) {
				t.Errorf("Error() = %q should say where memory was sought (%s), for logs", nr.Error(), tc.addr)
			}
		})
	}
}

func TestReadyHandlerWritesJSON(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	ready := ReadyHandler(nil, func(context.Context) error { return nil })
	ready.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" || rec.Code != http.StatusOK {
		t.Errorf("%d %q", rec.Code, ct)
	}
}
