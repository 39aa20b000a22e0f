// Package serve runs gRPC and HTTP servers and dials gRPC clients the way
// every zen role does: OpenTelemetry stats handlers, health and reflection,
// listeners opened before serving, and a graceful drain on shutdown.
package serve
