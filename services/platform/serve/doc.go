// Package serve runs gRPC and HTTP servers and dials gRPC clients the way
// every zen role does: OpenTelemetry stats handlers, health and reflection,
// listeners opened before serving, and a graceful drain on shutdown. Roles
// that share a process call each other through Local, which runs the same
// checks and stats handlers without a socket. Roles in other processes are
// dialled with Dial, which spreads calls over every replica a target names
// (round_robin), retries the calls that are safe to repeat, bounds memory's
// calls and keeps connections alive; servers recycle connections so callers
// find new replicas (balance.go). An HTTP request's body gets a time to
// arrive (BodyDeadline), which http.Server cannot give without binding the
// answer too.
package serve
