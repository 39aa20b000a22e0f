package telemetry

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// SetupMetrics installs a meter provider whose instruments (zen's own, and
// the gRPC and HTTP ones its stats handler and otelhttp record) are read by
// a Prometheus registry, and returns the handler that serves it at /metrics.
func SetupMetrics(service, version string) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	res := resource.NewSchemaless(semconv.ServiceName(service), semconv.ServiceVersion(version))
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res),
		sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: "http.server.*"},
			sdkmetric.Stream{AttributeFilter: attribute.NewDenyKeysFilter(clientChosen...)}))))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}

// clientChosen are the attributes of the HTTP server instruments that a
// client chooses the values of: otelhttp takes the server's address and
// port from each request's Host header, before the host or token is
// checked. Each value would be a series kept for the process's life.
// Clients' instruments (the router's calls of providers) keep theirs: the
// operator chose those hosts.
var clientChosen = []attribute.Key{"server.address", "server.port", "client.address", "client.port",
	"user_agent.original", "url.full", "url.path", "url.query"}

// Meter is zen's meter for its own instruments; until SetupMetrics runs it
// records nothing.
func Meter() metric.Meter { return otel.Meter("zen") }

// Instruments zen records beyond the gRPC and HTTP ones.
type Instruments struct {
	// ToolCalls counts MCP tool calls by tool and outcome; ToolDuration
	// times them (seconds).
	ToolCalls    metric.Int64Counter
	ToolDuration metric.Float64Histogram
	// ModelCalls counts model calls by provider, model and outcome;
	// ModelDuration times them; ModelTokens counts tokens by provider,
	// model and direction (input, output).
	// The model label is a catalogue name or "other": clients may name any
	// OpenRouter model, and each name would be new series.
	ModelCalls    metric.Int64Counter
	ModelDuration metric.Float64Histogram
	ModelTokens   metric.Int64Counter
	// BreakerOpened counts circuit breakers opening, by provider and scope
	// (provider, model); BreakerOpen is how many are open now.
	BreakerOpened metric.Int64Counter
	BreakerOpen   metric.Int64UpDownCounter
}

// NewInstruments creates the instruments on the current meter provider.
func NewInstruments() Instruments { return NewInstrumentsOn(Meter()) }

// NewInstrumentsOn creates the instruments on m, so that a test can read
// them without the global meter provider.
func NewInstrumentsOn(m metric.Meter) Instruments {
	var in Instruments
	// Each constructor returns a working no-op instrument beside any error,
	// and the names and options here are fixed, so errors are not expected
	// and would cost only the metric.
	in.ToolCalls, _ = m.Int64Counter("zen.tool.calls", metric.WithDescription("MCP tool calls, by tool and outcome"))
	in.ToolDuration, _ = m.Float64Histogram("zen.tool.duration", metric.WithUnit("s"),
		metric.WithDescription("MCP tool call duration"), metric.WithExplicitBucketBoundaries(0.01, 0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900))
	in.ModelCalls, _ = m.Int64Counter("zen.model.calls", metric.WithDescription("model calls, by provider, model and outcome"))
	in.ModelDuration, _ = m.Float64Histogram("zen.model.duration", metric.WithUnit("s"),
		metric.WithDescription("model call duration, retries included"), metric.WithExplicitBucketBoundaries(0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900))
	in.ModelTokens, _ = m.Int64Counter("zen.model.tokens", metric.WithDescription("tokens, by provider, model and direction"))
	in.BreakerOpened, _ = m.Int64Counter("zen.breaker.opened",
		metric.WithDescription("circuit breakers opened, by provider and scope (provider, model)"))
	in.BreakerOpen, _ = m.Int64UpDownCounter("zen.breaker.open",
		metric.WithDescription("circuit breakers open now, by provider and scope (provider, model)"))
	return in
}
