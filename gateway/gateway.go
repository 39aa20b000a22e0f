package gateway

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/zenmcp/zen/gateway/internal/openapidoc"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/hostguard"
	"github.com/zenmcp/zen/services/platform/httperr"
	"github.com/zenmcp/zen/services/platform/secrets"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/slots"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// openAPI is the gateway's one OpenAPI document: generated from the protos
// and routes.swagger.json by make gen.
//
//go:embed openapi/zen.swagger.json
var openAPI []byte

// routesHint ends the answer to a request for a route the gateway lacks.
const routesHint = "the gateway's routes are listed at GET /openapi.json"

// Conns are the services the gateway exposes: dialled, or in-process
// (serve.Local) in zen serve.
type Conns struct {
	Memory, Router, Executor grpc.ClientConnInterface
}

// Settings are what the gateway is told beside its connections. With
// Tokens set, every path but the health probes needs a bearer token, and
// shows that token's client's threads only. Requests naming a Host that is
// neither loopback nor in Hosts, cross-origin browser requests that change
// something, and changes whose body is not declared JSON are refused
// (hostguard, jsonOnly), whatever the listener. Version is zen's build
// version, which /openapi.json gives as the API's. The thread browser's
// view links each turn's trace through Trace. Secrets are zen's own, which
// an answer showing what a model reads (a thread's history) redacts.
type Settings struct {
	Tokens  auth.Tokens
	Hosts   hostguard.Hosts
	Version string
	Trace   TraceURL
	Secrets *secrets.Scrubber
}

// New returns the gateway's HTTP handler; GET / serves the thread browser.
func New(ctx context.Context, c Conns, s Settings) (http.Handler, error) {
	return newGateway(ctx, c, s, servedBodies)
}

// newGateway is New with its request bodies held to bodies.
func newGateway(ctx context.Context, c Conns, s Settings, bodies bodyBounds) (http.Handler, error) {
	tokens, hosts, version, trace := s.Tokens, s.Hosts, s.Version, s.Trace
	doc, err := versionedDoc(version)
	if err != nil {
		return nil, err
	}
	mux := runtime.NewServeMux(runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.JSONPb{
		MarshalOptions:   wholeJSON,
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}), runtime.WithIncomingHeaderMatcher(forwardNoHeader),
		// A form POST would otherwise reach GET routes, or any route with
		// X-HTTP-Method-Override; jsonOnly refuses forms first, this keeps
		// the generated routes to their own methods regardless.
		runtime.WithDisablePathLengthFallback(), runtime.WithDisableHTTPMethodOverride(),
		runtime.WithErrorHandler(writeGatewayError), runtime.WithRoutingErrorHandler(writeRoutingError))
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
	generated := withoutCredentials(boundBodies(bodies, mux))
	root.Handle("/v1/", generated)
	root.Handle("/", httperr.NotFound(routesHint))
	threads := threadPaths{
		memory:     memoryv1.NewMemoryServiceClient(c.Memory),
		router:     routerv1.NewRouterServiceClient(c.Router),
		trace:      trace,
		secrets:    s.Secrets,
		imports:    newImportSlots(),
		importTime: bodies.importTime,
		room:       slots.NewBudget(bodies.threadRoom),
		roomWait:   bodies.roomWait,
		holders:    slots.NewHolders(),
		generated:  generated,
	}
	ready := serve.ReadyHandler(tokens, func(ctx context.Context) error {
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
	})
	for _, r := range ownRoutes(threads, ready, doc) {
		root.Handle(r.pattern, r.handler)
	}
	// The thread browser's page and files hold no data: they need no token
	// (a browser cannot send one when it opens a page), only an allowed Host.
	top := http.NewServeMux()
	top.Handle("GET /{$}", uiHandler())
	top.Handle("GET /ui/", uiHandler())
	share := newShares(bodies.requestsEach, bodies.requestWait)
	top.Handle("/", tokens.Require(jsonOnly(utf8Only(share.hold(root))), probes...))
	// Probes send the pod's IP as Host and get no addresses: they skip the
	// Host check and the token.
	// A body's time to arrive (bodies.time) is serve.HTTP's, outside this.
	h := serve.Paced(bodies.sendTime, serve.Cuttable(hosts.Protect(nosniff(top), probes...)))
	return otelhttp.NewHandler(h, "gateway", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return "gateway " + r.Method + " " + r.URL.Path
	})), nil
}

// nosniff has every answer read as the type it declares, never sniffed:
// the generated routes' answers said nothing.
func nosniff(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
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

// route is one of the routes the gateway serves itself.
type route struct {
	pattern string // as http.ServeMux reads it
	handler http.Handler
}

// ownRoutes are the routes the gateway serves itself, beside the ones
// generated from the protos' HTTP rules; routes.swagger.json describes each
// of them in the OpenAPI document.
func ownRoutes(threads threadPaths, ready http.Handler, doc []byte) []route {
	return []route{
		{"GET /v1/threads:export", http.HandlerFunc(threads.export)},
		{"POST /v1/threads:import", http.HandlerFunc(threads.importThreads)},
		{"GET /v1/threads/{thread_id}", http.HandlerFunc(threads.thread)},
		{"GET /v1/threads/{thread_id}/history", http.HandlerFunc(threads.history)},
		{"GET /v1/threads:browse", http.HandlerFunc(threads.browse)},
		{"GET /v1/threads/{thread_id}/view", http.HandlerFunc(threads.view)},
		{"GET /v1/threads/{thread_id}/summary", http.HandlerFunc(threads.summary)},
		{"GET /healthz", http.HandlerFunc(serve.Live)},
		{"GET /readyz", ready},
		{"GET /openapi.json", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			jsonHeaders(w, "application/json")
			_, _ = w.Write(doc)
		})},
	}
}

// versionedDoc is the OpenAPI document with version as info.version: the
// committed document carries a placeholder, since its content must not
// change with every build.
func versionedDoc(version string) ([]byte, error) {
	d, err := openapidoc.Parse(openAPI)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if err := d.SetVersion(version); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return d.Encode()
}

// writeGatewayError answers the generated routes' errors in the one shape
// (httperr), as the gateway's own routes and guards answer theirs; the
// default handler would let protojson pick the spacing. A read of a thread
// the gateway weighed answers memory's refusal of a heavier one its own
// way (answerWeighed): it may write nothing, and weigh the thread again.
func writeGatewayError(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter,
	_ *http.Request, err error) {
	if answerWeighed(ctx, w, err) {
		return
	}
	httpStatus := 0 // the code's
	if custom := (*runtime.HTTPStatusError)(nil); errors.As(err, &custom) {
		httpStatus, err = custom.HTTPStatus, custom.Err
	}
	httperr.Status(w, httpStatus, status.Convert(err))
}

// writeRoutingError answers a path under /v1/ that no generated route
// takes as the root mux answers any other unknown path.
func writeRoutingError(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter,
	r *http.Request, httpStatus int) {
	switch httpStatus {
	case http.StatusNotFound:
		httperr.NotFound(routesHint).ServeHTTP(w, r)
	case http.StatusMethodNotAllowed:
		httperr.Status(w, httpStatus, status.Newf(codes.Unimplemented, "%s takes no %s: %s", r.URL.Path, r.Method,
			routesHint))
	default:
		runtime.DefaultRoutingErrorHandler(ctx, mux, m, w, r, httpStatus) // through writeGatewayError
	}
}

// writeJSON answers v as JSON. It encodes first: a value that does not
// encode (a number out of JSON's range) answers 500 in the one error
// shape, not a 200 with no body. '<', '>' and '&' stay as they are: the
// answer is JSON, never read as HTML (nosniff), and escaping them made a
// turn of them six times its size.
func writeJSON(w http.ResponseWriter, code int, v any) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		httperr.Error(w, codes.Internal, "the gateway could not write its answer as JSON; please report this as a bug")
		return
	}
	jsonHeaders(w, "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body.Bytes())
}

// jsonHeaders declares an answer's JSON type, and that browsers must take
// it as that type alone, as httperr's error answers do.
func jsonHeaders(w http.ResponseWriter, contentType string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
