package serve

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/rpcconv"
	"go.opentelemetry.io/otel/trace"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	grpcstatus "google.golang.org/grpc/status"
)

// rpcStats traces and measures gRPC calls exactly as otelgrpc's stats
// handlers do with their default semantic conventions (the same scope,
// span names, kinds, attributes, statuses, metric and buckets; the test
// TestRPCStatsMatchOtelgrpc holds it to that), with what does not change
// from one call to the next worked out once: otelgrpc built each call's
// attribute lists, parsed its peer's address and sorted a new attribute
// set for its duration, about a quarter of what the router's hop cost a
// call at one caller. When OTEL_SEMCONV_STABILITY_OPT_IN asks for the old
// or both conventions, otelgrpc's own handlers serve instead (newRPCStats).
type rpcStats struct {
	client      bool
	kind        trace.SpanKind
	tracer      trace.Tracer
	propagators propagation.TextMapPropagator
	duration    metric.Float64Histogram
	filter      func(*stats.RPCTagInfo) bool
	// methods and addrs hold what is worked out once per method and per
	// peer address.
	methods cache[string, *methodStats]
	addrs   cache[string, *peerAddr]
}

// durationBuckets are otelgrpc's bucket boundaries, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// newRPCStats returns the handler for one side of every call but those
// filter leaves out, recording to otel's global providers.
func newRPCStats(client bool, filter func(*stats.RPCTagInfo) bool) stats.Handler {
	return newRPCStatsWith(client, filter, providers{otel.GetTracerProvider(), otel.GetMeterProvider(),
		otel.GetTextMapPropagator()}, os.Getenv("OTEL_SEMCONV_STABILITY_OPT_IN"))
}

// providers are where a handler records, and how it propagates.
type providers struct {
	traces      trace.TracerProvider
	metrics     metric.MeterProvider
	propagators propagation.TextMapPropagator
}

// newRPCStatsWith is newRPCStats recording to p, with semconvOptIn the
// value of OTEL_SEMCONV_STABILITY_OPT_IN.
func newRPCStatsWith(client bool, filter func(*stats.RPCTagInfo) bool, p providers,
	semconvOptIn string) stats.Handler {
	if filter == nil {
		filter = func(*stats.RPCTagInfo) bool { return true }
	}
	if wantsOldConventions(semconvOptIn) {
		return otelgrpcHandler(client, filter, p)
	}
	h := &rpcStats{client: client, kind: trace.SpanKindServer, propagators: p.propagators, filter: filter}
	if client {
		h.kind = trace.SpanKindClient
	}
	h.tracer = p.traces.Tracer(otelgrpc.ScopeName, trace.WithInstrumentationVersion(otelgrpc.Version))
	meter := p.metrics.Meter(otelgrpc.ScopeName, metric.WithInstrumentationVersion(otelgrpc.Version),
		metric.WithSchemaURL(semconv.SchemaURL))
	// A failed instrument is a no-op one; otel reports the error itself.
	if client {
		d, err := rpcconv.NewClientCallDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
		otelHandle(err)
		h.duration = d.Inst()
	} else {
		d, err := rpcconv.NewServerCallDuration(meter, metric.WithExplicitBucketBoundaries(durationBuckets...))
		otelHandle(err)
		h.duration = d.Inst()
	}
	return h
}

// otelgrpcHandler is otelgrpc's own handler for one side, recording to p.
func otelgrpcHandler(client bool, filter func(*stats.RPCTagInfo) bool, p providers) stats.Handler {
	opts := []otelgrpc.Option{otelgrpc.WithFilter(filter), otelgrpc.WithTracerProvider(p.traces),
		otelgrpc.WithMeterProvider(p.metrics), otelgrpc.WithPropagators(p.propagators)}
	if client {
		return otelgrpc.NewClientHandler(opts...)
	}
	return otelgrpc.NewServerHandler(opts...)
}

func otelHandle(err error) {
	if err != nil {
		otel.Handle(err)
	}
}

// wantsOldConventions reads OTEL_SEMCONV_STABILITY_OPT_IN as otelgrpc does.
func wantsOldConventions(v string) bool {
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p == "rpc/dup" || p == "rpc/old" {
			return true
		}
	}
	return false
}

// methodStats is what a method's calls share.
type methodStats struct {
	full      string // the method's full name, /package.Service/Method
	name      string // the span name: the method without its leading slash
	spanStart []trace.SpanStartOption
	attrs     []attribute.KeyValue // rpc.method, rpc.system.name
	// ends holds the duration's attribute set for each way a call ends
	// (status code, and for a client, the server's address).
	ends cache[endKey, attribute.Set]
}

// callStats is one call's, from TagRPC to End.
type callStats struct {
	method *methodStats
	// uncached is a server's call of a method not yet kept, to keep once
	// it has answered.
	uncached bool
	// peer is the server's address attributes a client's metrics carry,
	// once the call's headers went out.
	peer *peerAddr
}

type peerAddr struct {
	key   string
	attrs []attribute.KeyValue
}

type callStatsKey struct{}

func (h *rpcStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (h *rpcStats) HandleConn(context.Context, stats.ConnStats)                       {}

func (h *rpcStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	if !h.client {
		ctx = h.propagators.Extract(ctx, incomingCarrier(ctx))
	}
	if !h.filter(info) {
		ctx = context.WithValue(ctx, callStatsKey{}, (*callStats)(nil))
		if h.client {
			ctx = inject(ctx, h.propagators) // the caller's trace goes on, untraced
		}
		return ctx
	}
	m, cached := h.method(info.FullMethodName)
	if h.client {
		ctx, _ = h.tracer.Start(ctx, m.name, m.spanStart...)
	} else {
		ctx, _ = h.tracer.Start(trace.ContextWithRemoteSpanContext(ctx, trace.SpanContextFromContext(ctx)), m.name,
			m.spanStart...)
	}
	ctx = context.WithValue(ctx, callStatsKey{}, &callStats{method: m, uncached: !cached})
	if h.client {
		ctx = inject(ctx, h.propagators)
	}
	return ctx
}

func (h *rpcStats) HandleRPC(ctx context.Context, rs stats.RPCStats) {
	c, _ := ctx.Value(callStatsKey{}).(*callStats)
	if c == nil {
		return // filtered out, or a call this handler did not tag
	}
	span := trace.SpanFromContext(ctx)
	switch rs := rs.(type) {
	case *stats.InHeader:
		if !rs.Client && rs.LocalAddr != nil && span.IsRecording() {
			span.SetAttributes(h.addr(rs.LocalAddr).attrs...)
		}
	case *stats.OutHeader:
		if rs.Client && rs.RemoteAddr != nil {
			c.peer = h.addr(rs.RemoteAddr)
			if span.IsRecording() {
				span.SetAttributes(c.peer.attrs...)
			}
		}
	case *stats.End:
		h.end(ctx, c, span, rs)
	}
}

// end closes the span and records the duration.
func (h *rpcStats) end(ctx context.Context, c *callStats, span trace.Span, rs *stats.End) {
	code := grpccodes.OK
	var st *grpcstatus.Status
	if rs.Error != nil {
		st, _ = grpcstatus.FromError(rs.Error)
		code = st.Code()
	}
	failed := st != nil && (h.client || serverError(code))
	if span.IsRecording() {
		if st != nil {
			if failed {
				span.SetStatus(codes.Error, st.Message())
			} else {
				span.SetStatus(codes.Unset, "")
			}
		}
		span.SetAttributes(semconv.RPCResponseStatusCode(canonicalCode(code)))
		span.End()
	}
	if c.uncached && code == grpccodes.OK {
		// A method that answered is one the server has: a client may name
		// any method it likes, but it cannot make one up that answers.
		h.methods.store(c.method.full, c.method)
	}
	if !h.duration.Enabled(ctx) {
		return
	}
	set := c.method.endSet(code, failed, c.peer)
	elapsed := float64(rs.EndTime.Sub(rs.BeginTime)) / 1e9
	h.duration.Record(ctx, elapsed, metric.WithAttributeSet(set))
}

// serverError tells the codes otelgrpc counts as a server's own failure.
func serverError(c grpccodes.Code) bool {
	switch c {
	case grpccodes.Unknown, grpccodes.DeadlineExceeded, grpccodes.Unimplemented, grpccodes.Internal,
		grpccodes.Unavailable, grpccodes.DataLoss:
		return true
	}
	return false
}

// method is the stats a method's calls share, worked out on its first:
// a client's first call, a server's first call that answered.
func (h *rpcStats) method(full string) (m *methodStats, cached bool) {
	if m, ok := h.methods.load(full); ok {
		return m, true
	}
	m = &methodStats{full: full, name: full}
	if rest, ok := strings.CutPrefix(full, "/"); ok {
		m.name = rest
		m.attrs = []attribute.KeyValue{semconv.RPCMethod(rest)}
	}
	m.attrs = append(m.attrs, semconv.RPCSystemNameGRPC)
	m.spanStart = []trace.SpanStartOption{trace.WithSpanKind(h.kind), trace.WithAttributes(m.attrs...)}
	if h.client {
		h.methods.store(full, m) // zen's own code names the methods it calls
		return m, true
	}
	return m, false
}

// addr is the server.address and server.port of a peer's address.
func (h *rpcStats) addr(a net.Addr) *peerAddr {
	s := a.String()
	if p, ok := h.addrs.load(s); ok {
		return p
	}
	p := &peerAddr{key: s, attrs: addrAttrs(s)}
	h.addrs.store(s, p)
	return p
}

// addrAttrs are otelgrpc's address attributes of host:port.
func addrAttrs(hostport string) []attribute.KeyValue {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return []attribute.KeyValue{semconv.ServerAddress(hostport)}
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return []attribute.KeyValue{semconv.ServerAddress(host)}
	}
	return []attribute.KeyValue{semconv.ServerAddress(host), semconv.ServerPort(p)}
}

// endKey names one way a method's calls end.
type endKey struct {
	code   grpccodes.Code
	failed bool
	peer   string
}

// endSet is the duration's attribute set for a call that ended so.
func (m *methodStats) endSet(code grpccodes.Code, failed bool, peer *peerAddr) attribute.Set {
	k := endKey{code: code, failed: failed}
	if peer != nil {
		k.peer = peer.key
	}
	if s, ok := m.ends.load(k); ok {
		return s
	}
	attrs := append([]attribute.KeyValue{}, m.attrs...)
	if peer != nil {
		attrs = append(attrs, peer.attrs...)
	}
	attrs = append(attrs, semconv.RPCResponseStatusCode(canonicalCode(code)))
	if failed {
		attrs = append(attrs, semconv.ErrorTypeKey.String(canonicalCode(code)))
	}
	s := attribute.NewSet(attrs...)
	m.ends.store(k, s)
	return s
}

// codeNames are the status codes' names as otelgrpc writes them.
var codeNames = [...]string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// canonicalCode is a status code's name as otelgrpc writes it.
func canonicalCode(c grpccodes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "CODE(" + strconv.FormatInt(int64(c), 10) + ")"
}

// maxCached bounds each of rpcStats's caches. What they hold is few (the
// methods a server answers, its own addresses, the servers a client
// calls), but a client's servers change as replicas come and go.
const maxCached = 1024

// cache is a concurrent map of what is worked out once per key, bounded:
// when full it starts again empty, so keys that keep changing cost work,
// not memory.
type cache[K comparable, V any] struct {
	m atomic.Pointer[sync.Map]
	n atomic.Int64
}

func (c *cache[K, V]) load(k K) (V, bool) {
	if m := c.m.Load(); m != nil {
		if v, ok := m.Load(k); ok {
			return v.(V), true
		}
	}
	var zero V
	return zero, false
}

func (c *cache[K, V]) store(k K, v V) {
	m := c.m.Load()
	if m == nil || c.n.Load() >= maxCached {
		// Two callers may both start afresh; one's entry is then lost,
		// and worked out again.
		m = new(sync.Map)
		c.m.Store(m)
		c.n.Store(0)
	}
	if _, loaded := m.LoadOrStore(k, v); !loaded {
		c.n.Add(1)
	}
}

// inject puts ctx's trace context into the call's outgoing metadata.
func inject(ctx context.Context, p propagation.TextMapPropagator) context.Context {
	md, ok := metadata.FromOutgoingContext(ctx) // a copy
	if !ok {
		md = metadata.MD{}
	}
	p.Inject(ctx, mdCarrier(md))
	return metadata.NewOutgoingContext(ctx, md)
}

// incomingCarrier reads the call's incoming metadata.
func incomingCarrier(ctx context.Context) mdCarrier {
	md, _ := metadata.FromIncomingContext(ctx)
	return mdCarrier(md)
}

// mdCarrier is gRPC metadata as a propagation carrier.
type mdCarrier metadata.MD

func (c mdCarrier) Get(key string) string {
	v := metadata.MD(c).Get(key)
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func (c mdCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c mdCarrier) Keys() []string {
	out := make([]string, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	return out
}
