// Package platform is the module shared by every zen service: configuration,
// telemetry, gRPC and HTTP serving, token estimates, and for tests a fake
// model server, a real Redis (redistest) and a log a test reads while it is
// written (logtest). It holds no business logic.
package platform
