package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"
)

// Dependency is a gRPC service a role needs to do its work.
type Dependency struct {
	Name string                   // the role, for messages: "memory"
	Conn grpc.ClientConnInterface // dialled (*grpc.ClientConn) or in-process (*Local)
}

// NotReadyError names the role that keeps this one from being ready. Its
// public part (role and reason) is fit for anyone; Detail says where the
// role was sought and what failed, which maps the inside of a deployment,
// so it goes to logs and authenticated callers only.
type NotReadyError struct {
	Role   string // "memory"
	Reason string // "is unreachable"
	Detail string // "at 10.0.0.9:9090: connection refused"
}

// Public is the role and what is wrong with it, without addresses.
func (e *NotReadyError) Public() string { return e.Role + " " + e.Reason }

func (e *NotReadyError) Error() string {
	if e.Detail == "" {
		return e.Public()
	}
	return e.Public() + " " + e.Detail
}

// Warning is a role that serves but whose work is at risk, such as memory
// keeping threads in a Redis without persistence. Readiness stays 200 and
// says so: nothing a probe could restart would help, and an operator
// reading /readyz or the log should see it.
type Warning struct {
	Role    string   // "memory"
	Reasons []string // each worded to follow the role's name
}

// Warn is a *Warning for role's reasons, or nil when there are none.
func Warn(role string, reasons []string) error {
	if len(reasons) == 0 {
		return nil
	}
	return &Warning{Role: role, Reasons: reasons}
}

func (w *Warning) Error() string {
	parts := make([]string, len(w.Reasons))
	for i, r := range w.Reasons {
		parts[i] = w.Role + " " + r
	}
	return strings.Join(parts, "; ")
}

// CheckAll asks each dependency's health service whether it serves, and
// returns a *NotReadyError naming the first that does not.
func CheckAll(ctx context.Context, deps []Dependency) error {
	for _, d := range deps {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := healthpb.NewHealthClient(d.Conn).Check(cctx, &healthpb.HealthCheckRequest{})
		cancel()
		where := "in-process"
		if t, ok := d.Conn.(interface{ Target() string }); ok {
			where = "at " + t.Target()
		}
		if err != nil && notServing(err) {
			return &NotReadyError{Role: d.Name, Reason: "is NOT_SERVING", Detail: fmt.Sprintf("%s: %v", where, err)}
		}
		if err != nil {
			return &NotReadyError{Role: d.Name, Reason: "is unreachable", Detail: fmt.Sprintf("%s: %v", where, err)}
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return &NotReadyError{Role: d.Name, Reason: "is " + resp.GetStatus().String(), Detail: where}
		}
	}
	return nil
}

// notServing tells whether a call failed because no replica it could reach
// says it serves: the connection checks its replicas' health (the service
// config's healthCheckConfig) and calls none that says NOT_SERVING, so a
// health check of a role whose every replica says so fails before reaching
// one, with gRPC's own text. Anything else is a role not reached at all.
func notServing(err error) bool {
	return grpcstatus.Code(err) == codes.Unavailable && strings.Contains(grpcstatus.Convert(err).Message(),
		"health check failed")
}

// ReadyHandler answers readiness probes (GET /readyz): 200
// {"status":"ready"}, with "warning" when check returns a *Warning, or 503
// {"status":"not ready","missing":"memory","reason":"memory is
// unreachable"}. The probe is open to anyone (kubelet has no token), so
// "detail", with addresses, is added only for a caller with a valid bearer
// token; with auth off nobody has one. A warning names no address.
func ReadyHandler(tokens auth.Tokens, check func(context.Context) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := check(r.Context())
		if warn := (*Warning)(nil); err == nil || errors.As(err, &warn) {
			body := map[string]string{"status": "ready"}
			if warn != nil {
				body["warning"] = warn.Error()
			}
			writeProbe(w, http.StatusOK, body)
			return
		}
		body := map[string]string{"status": "not ready", "reason": "not ready"}
		if nr := (*NotReadyError)(nil); errors.As(err, &nr) {
			body["missing"], body["reason"] = nr.Role, nr.Public()
		}
		if authenticated(tokens, r) {
			body["detail"] = err.Error()
		}
		writeProbe(w, http.StatusServiceUnavailable, body)
	}
}

// authenticated reports whether r carries one of tokens as a bearer token.
func authenticated(tokens auth.Tokens, r *http.Request) bool {
	_, ok := tokens.ClientOf(r)
	return ok
}

// Health is what GET /healthz answers.
type Health struct {
	Status string `json:"status"`
}

// Live answers GET /healthz: the process serves HTTP. Every listener that
// has the probe answers it so.
func Live(w http.ResponseWriter, _ *http.Request) {
	writeProbe(w, http.StatusOK, Health{Status: "ok"})
}

func writeProbe(w http.ResponseWriter, code int, body any) {
	// JSON, never read as anything else (nosniff), as every JSON answer
	// of the gateway's is.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}
