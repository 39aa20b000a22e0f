package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/zenmcp/zen/services/platform/config"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Setup installs a tracer provider and the W3C propagators as the process
// globals and returns a function that flushes and stops them. Every call
// has a trace id for logs and results. Spans are recorded and exported
// over OTLP/gRPC only when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; otherwise, unless
// OTEL_TRACES_SAMPLER names another sampler than the default, they carry
// their ids and nothing else (idsOnly). OTEL_SERVICE_NAME, when set, wins
// over service. Settings zen cannot use are reported to logger (nil: the
// default logger) and ignored. Spans leave scrubbed by scrub, when set
// (ScrubSpans).
func Setup(ctx context.Context, service, version string, getenv config.Getenv,
	logger *slog.Logger, scrub func(string) string) (trace.TracerProvider, func(context.Context) error, error) {
	if name := getenv("OTEL_SERVICE_NAME"); name != "" {
		service = name
	}
	propagators := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	exporting := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	if logger == nil {
		logger = slog.Default()
	}
	sample, byDefault := sampler(getenv, logger.Warn)
	if !exporting && byDefault {
		otel.SetTextMapPropagator(propagators)
		otel.SetTracerProvider(idsOnly{})
		return idsOnly{}, func(context.Context) error { return nil }, nil
	}
	res := resource.NewSchemaless(semconv.ServiceName(service), semconv.ServiceVersion(version))
	// A sampler set for a process that exports nothing still decides for
	// the hops after it.
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSampler(sample)}
	if exporting {
		if p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")); p != "" && p != "grpc" {
			return nil, nil, fmt.Errorf(
				"OTEL_EXPORTER_OTLP_PROTOCOL=%q: zen exports traces over grpc only; unset it or set grpc", p)
		}
		exp, err := otlptracegrpc.New(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: create OTLP exporter: %w", err)
		}
		var batches sdktrace.SpanProcessor = sdktrace.NewBatchSpanProcessor(exp)
		if scrub != nil {
			batches = ScrubSpans(batches, scrub)
		}
		opts = append(opts, sdktrace.WithSpanProcessor(batches))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTextMapPropagator(propagators)
	otel.SetTracerProvider(tp)
	return tp, tp.Shutdown, nil
}

// TraceID returns the hex trace id of the span in ctx, or "".
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}
