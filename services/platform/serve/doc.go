// Package serve runs gRPC and HTTP servers and dials gRPC clients the way
// every zen role does: OpenTelemetry stats handlers, health and reflection,
// listeners opened before serving, and a graceful drain on shutdown. Roles
// that share a process call each other through Local, which runs the same
// checks and stats handlers without a socket.
package serve
