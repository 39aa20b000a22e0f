package gateway

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/hostguard"
	"github.com/zenmcp/zen/services/platform/serve"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
)

//go:embed openapi/zen.swagger.json
var openAPI []byte

// Conns are the services the gateway exposes: dialled, or in-process
// (serve.Local) in zen serve.
type Conns struct {
	Memory, Router, Executor grpc.ClientConnInterface
}

// New returns the gateway's HTTP handler. With tokens set, every path but
// the health probes needs a bearer token, and shows that token's client's
// threads only. Requests naming a Host that is neither loopback nor in
// hosts, cross-origin browser requests that change something, and
// changes whose body is not declared JSON are refused (hostguard,
// jsonOnly), whatever the listener.
func New(ctx context.Context, c Conns, tokens auth.Tokens, hosts hostguard.Hosts) (http.Handler, error) {
	mux := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}), runtime.WithIncomingHeaderMatcher(forwardNoHeader),
		// A form POST would otherwise reach GET routes, or any route with
		// X-HTTP-Method-Override; jsonOnly refuses forms first, this keeps
		// the generated routes to their own methods regardless.
		runtime.WithDisablePathLengthFallback(), runtime.WithDisableHTTPMethodOverride())
	if err := memoryv1.RegisterMemoryServiceHandlerClient(ctx, mux, memoryv1.NewMemoryServiceClient(c.Memory)); err != nil {
		return nil, fmt.Errorf("gateway: memory routes: %w", err)
	}
	if err := routerv1.RegisterRouterServiceHandlerClient(ctx, mux, routerv1.NewRouterServiceClient(c.Router)); err != nil {
		return nil, fmt.Errorf("gateway: router routes: %w", err)
	}
	if err := executorv1.RegisterExecutorServiceHandlerClient(ctx, mux, executorv1.NewExecutorServiceClient(c.Executor)); err != nil {
		return nil, fmt.Errorf("gateway: executor routes: %w", err)
	}
	deps := []serve.Dependency{{Name: "memory", Conn: c.Memory}, {Name: "router", Conn: c.Router}, {Name: "executor", Conn: c.Executor}}

	root := http.NewServeMux()
	root.Handle("/v1/", withoutCredentials(mux))
	threads := threadPaths{memory: memoryv1.NewMemoryServiceClient(c.Memory), router: routerv1.NewRouterServiceClient(c.Router)}
	root.HandleFunc("GET /v1/threads:export", threads.export)
	root.HandleFunc("POST /v1/threads:import", threads.importThreads)
	root.HandleFunc("GET /v1/threads/{thread_id}/history", threads.history)
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	root.Handle("GET /readyz", serve.ReadyHandler(tokens, func(ctx context.Context) error {
		if err := serve.CheckAll(ctx, deps); err != nil {
			return err
		}
		// What puts threads at risk: a Redis without persistence, or one
		// that lost its data.
		settings, err := threads.memory.GetSettings(ctx, &memoryv1.GetSettingsRequest{})
		if err != nil {
			return nil // memory's health says it serves; a failed question is no warning
		}
		return serve.Warn("memory", settings.GetWarnings())
	}))
	root.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openAPI)
	})
	// Probes send the pod's IP as Host and get no addresses: they skip the
	// Host check and the token.
	h := hosts.Protect(tokens.Require(jsonOnly(root), "/healthz", "/readyz"), "/healthz", "/readyz")
	return otelhttp.NewHandler(h, "gateway", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return "gateway " + r.Method + " " + r.URL.Path
	})), nil
}

// forwardNoHeader keeps every HTTP header out of the gRPC metadata: the
// default would pass Authorization (the client's token) and any
// Grpc-Metadata-* header, through which a caller could name the client it
// acts for. Who a call acts for comes from the verified token alone.
func forwardNoHeader(string) (string, bool) { return "", false }

// withoutCredentials drops the client's bearer token once it has been
// verified: grpc-gateway passes Authorization on as metadata whatever the
// header matcher says, and the inner services must see zen's service
// credential alone, never a client's token.
func withoutCredentials(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
