// Package telemetry sets up OpenTelemetry tracing (OTLP export when the
// standard OTEL_* variables ask for it) and structured logs that carry the
// trace id of the context they are written in, with secret values scrubbed
// from every line.
package telemetry
