// Package platform is the module shared by every zen service: configuration,
// telemetry, gRPC and HTTP serving, token estimates, and a fake model server
// for tests. It holds no business logic.
package platform
