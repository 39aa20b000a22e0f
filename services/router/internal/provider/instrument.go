package provider

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"
)

// A provider call is traced and measured as otelhttp's client transport
// does it, under otelhttp's scope, so that traces and dashboards read the
// same: a client span per request, named "provider POST /v1/...", ended
// when the reply's body is read or closed, and the histograms
// http.client.request.duration and http.client.request.body.size with
// their usual attributes. otelhttp builds, sorts and hashes a new
// attribute set for the metrics of every request; here each distinct set
// (one provider host, one status, one protocol) is built once and kept.
// TestTracedMatchesOtelhttp holds the two to the same output.

// clientDurationBuckets are otelhttp's bucket bounds, in seconds.
var clientDurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// traced wraps next with the span and metrics of each request, on the
// global meter provider and propagator (otel's globals forward to the ones
// installed later).
func traced(next http.RoundTripper) http.RoundTripper {
	return newTraced(next, otel.GetMeterProvider(), otel.GetTextMapPropagator())
}

func newTraced(next http.RoundTripper, mp metric.MeterProvider, prop propagation.TextMapPropagator) *tracedTransport {
	meter := mp.Meter(otelhttp.ScopeName, metric.WithInstrumentationVersion(otelhttp.Version))
	t := &tracedTransport{next: next, prop: prop}
	var err error
	// On an error the constructors return a working no-op instrument:
	// reported, it costs only the metric.
	if t.duration, err = httpconv.NewClientRequestDuration(meter,
		metric.WithExplicitBucketBoundaries(clientDurationBuckets...)); err != nil {
		otel.Handle(err)
	}
	if t.size, err = httpconv.NewClientRequestBodySize(meter); err != nil {
		otel.Handle(err)
	}
	return t
}

type tracedTransport struct {
	next     http.RoundTripper
	prop     propagation.TextMapPropagator
	duration httpconv.ClientRequestDuration
	size     httpconv.ClientRequestBodySize
	sets     sync.Map // metricKey → []metric.RecordOption holding its attribute set
	tracer   atomic.Pointer[scopedTracer]
}

// metricKey is what a request's metric attributes are made of.
type metricKey struct {
	method, host, scheme, proto, errType string
	port, status                         int
}

type scopedTracer struct {
	tp     trace.TracerProvider
	tracer trace.Tracer
}

// tracerFor is otelhttp's tracer from the provider of the span in ctx, or
// the global one; the last one asked for is kept.
func (t *tracedTransport) tracerFor(ctx context.Context) trace.Tracer {
	tp := otel.GetTracerProvider()
	if span := trace.SpanFromContext(ctx); span.SpanContext().IsValid() {
		tp = span.TracerProvider()
	}
	if c := t.tracer.Load(); c != nil && reflect.TypeOf(tp).Comparable() && c.tp == tp {
		return c.tracer
	}
	tracer := tp.Tracer(otelhttp.ScopeName, trace.WithInstrumentationVersion(otelhttp.Version))
	t.tracer.Store(&scopedTracer{tp: tp, tracer: tracer})
	return tracer
}

func (t *tracedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	ctx, span := t.tracerFor(r.Context()).Start(r.Context(), "provider "+r.Method+" "+r.URL.Path,
		trace.WithSpanKind(trace.SpanKindClient))
	ctx, sent := countSent(ctx, r)
	r = r.Clone(ctx) // a RoundTripper must not change the request it was given
	if sent == nil {
		sent = countBody(r)
	}
	// The span's attributes are set once, with the response's: each
	// SetAttributes grows the span's slice anew.
	attrs := requestAttrs(r)
	t.prop.Inject(ctx, propagation.HeaderCarrier(r.Header))

	resp, err := t.next.RoundTrip(r)
	switch {
	case err == nil && resp == nil:
		err = fmt.Errorf("http: RoundTripper implementation (%T) returned a nil *Response with a nil error", t.next)
	case err == nil && resp.Body == nil:
		resp.Body = http.NoBody
	}
	t.record(ctx, r, resp, err, time.Since(start), sent)
	if err != nil {
		span.SetAttributes(append(attrs, semconv.ErrorType(err))...)
		span.SetStatus(codes.Error, err.Error())
		span.End()
		return resp, err
	}
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span}
	span.SetAttributes(responseAttrs(attrs, resp)...)
	span.SetStatus(spanStatus(resp.StatusCode))
	return resp, nil
}

// record adds the request to the two histograms.
func (t *tracedTransport) record(ctx context.Context, r *http.Request, resp *http.Response, err error,
	d time.Duration, sent *sentBytes) {
	if !t.duration.Enabled(ctx) && !t.size.Enabled(ctx) {
		return
	}
	k := metricKey{method: standardMethod(r.Method), scheme: scheme(r), proto: r.Proto}
	var port int
	k.host, port = hostPort(r)
	k.port = requiredPort(r.URL.Scheme == "https", port)
	if resp != nil && resp.Proto != "" {
		k.proto = resp.Proto // what was negotiated, not what was asked
	}
	if err == nil {
		k.status = resp.StatusCode
	} else {
		k.errType = errorType(err).Value.AsString()
	}
	opts, ok := t.sets.Load(k)
	if !ok {
		opts, _ = t.sets.LoadOrStore(k, []metric.RecordOption{metric.WithAttributeSet(k.attributes())})
	}
	t.size.Inst().Record(ctx, sent.n(), opts.([]metric.RecordOption)...)
	t.duration.Inst().Record(ctx, float64(d)/float64(time.Second), opts.([]metric.RecordOption)...)
}

// attributes are otelhttp's metric attributes for k.
func (k metricKey) attributes() attribute.Set {
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(k.method), semconv.ServerAddress(k.host),
		semconv.URLScheme(k.scheme)}
	if k.port > 0 {
		attrs = append(attrs, semconv.ServerPort(k.port))
	}
	name, version := netProtocol(k.proto)
	if name != "" {
		attrs = append(attrs, semconv.NetworkProtocolName(name))
	}
	if version != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(version))
	}
	if k.status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(k.status))
	}
	if k.errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(k.errType))
	}
	return attribute.NewSet(attrs...)
}

// requestAttrs are otelhttp's span attributes for a request.
func requestAttrs(r *http.Request) []attribute.KeyValue {
	host, port := hostPort(r)
	port = requiredPort(r.URL.Scheme == "https", port)
	name, version := netProtocol(r.Proto)
	attrs := make([]attribute.KeyValue, 0, 11) // room for the response's
	method := standardMethod(r.Method)
	attrs = append(attrs, semconv.HTTPRequestMethodKey.String(method))
	if r.Method != "" && (r.Method != method || method == "_OTHER") {
		attrs = append(attrs, semconv.HTTPRequestMethodOriginal(r.Method))
	}
	u := *r.URL
	u.User = nil // credentials stay out of traces
	attrs = append(attrs, semconv.URLFull(u.String()), semconv.ServerAddress(host))
	if port > 0 {
		attrs = append(attrs, semconv.ServerPort(port))
	}
	if name != "" && name != "http" {
		attrs = append(attrs, semconv.NetworkProtocolName(name))
	}
	if version != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(version))
	}
	return attrs
}

// responseAttrs appends otelhttp's span attributes for a response to
// attrs; its protocol replaces the request's.
func responseAttrs(attrs []attribute.KeyValue, resp *http.Response) []attribute.KeyValue {
	if resp.StatusCode > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(resp.StatusCode))
	}
	if resp.StatusCode >= 400 || resp.StatusCode < 100 {
		attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(resp.StatusCode)))
	}
	name, version := netProtocol(resp.Proto)
	if name != "" && name != "http" {
		attrs = append(attrs, semconv.NetworkProtocolName(name))
	}
	if version != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(version))
	}
	return attrs
}

func spanStatus(code int) (codes.Code, string) {
	switch {
	case code < 100 || code >= 600:
		return codes.Error, fmt.Sprintf("Invalid HTTP status code %d", code)
	case code >= 400:
		return codes.Error, ""
	}
	return codes.Unset, ""
}

// standardMethod is the method, or "_OTHER" for one HTTP does not define.
func standardMethod(m string) string {
	switch u := strings.ToUpper(m); u {
	case http.MethodConnect, http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodOptions,
		http.MethodPatch, http.MethodPost, http.MethodPut, http.MethodTrace:
		return u
	}
	return "_OTHER"
}

func scheme(r *http.Request) string {
	switch {
	case r.URL.Scheme != "":
		return r.URL.Scheme
	case r.TLS != nil:
		return "https"
	}
	return "http"
}

// hostPort is the server's host and port (-1 when not given), from the URL
// or else the Host header.
func hostPort(r *http.Request) (string, int) {
	host, port := splitHostPort(r.URL.Host)
	if host == "" && port <= 0 {
		host, port = splitHostPort(r.Header.Get("Host"))
	}
	return host, port
}

func splitHostPort(hostport string) (host string, port int) {
	if strings.HasPrefix(hostport, "[") {
		end := strings.LastIndexByte(hostport, ']')
		if end < 0 {
			return "", -1
		}
		if !strings.Contains(hostport[end:], ":") {
			return hostport[1:end], -1
		}
	} else if !strings.Contains(hostport, ":") {
		return hostport, -1
	}
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return host, -1
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return host, -1
	}
	return host, int(n)
}

// requiredPort is the port when it is not the scheme's own, else -1.
func requiredPort(https bool, port int) int {
	if port <= 0 || https && port == 443 || !https && port == 80 {
		return -1
	}
	return port
}

// netProtocol splits "HTTP/1.1" into "http" and "1.1".
func netProtocol(proto string) (name, version string) {
	name, version, _ = strings.Cut(proto, "/")
	return strings.ToLower(name), version
}

// errorType names err's type as otelhttp's metrics do: without the "*"
// that semconv.ErrorType, which names it on spans, gives a pointer.
func errorType(err error) attribute.KeyValue {
	t := reflect.TypeOf(err)
	if t == nil {
		return semconv.ErrorTypeOther
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == "" || t.Name() == "" {
		return semconv.ErrorTypeKey.String(t.String())
	}
	return semconv.ErrorTypeKey.String(t.PkgPath() + "." + t.Name())
}

// spanBody ends the span when the reply has been read or closed, and marks
// it failed when reading the reply fails.
type spanBody struct {
	io.ReadCloser
	span  trace.Span
	ended atomic.Bool
}

func (b *spanBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch err {
	case nil:
	case io.EOF:
		b.end()
	default:
		b.span.SetAttributes(semconv.ErrorType(err))
		b.span.SetStatus(codes.Error, err.Error())
	}
	return n, err
}

func (b *spanBody) Close() error {
	b.end()
	return b.ReadCloser.Close()
}

func (b *spanBody) end() {
	if b.ended.CompareAndSwap(false, true) {
		b.span.End()
	}
}
