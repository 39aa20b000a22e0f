// Package gateway serves HTTP/JSON inspection of the memory, router and
// executor services through grpc-gateway, with health and readiness
// endpoints and the generated OpenAPI document. It holds no business logic.
package gateway
