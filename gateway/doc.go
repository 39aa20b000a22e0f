// Package gateway serves HTTP/JSON inspection of the memory, router and
// executor services through grpc-gateway, with health and readiness
// endpoints and the generated OpenAPI document, and a thread browser: a
// web page at / (ui/, embedded) over read routes of its own (browse.go,
// view.go). Those routes do work of their own: they add up what each
// thread's turns used, from the records services/platform/turnmeta owns,
// and look through the client's threads for a search or a thread's
// branches. What a thread is and who may read it stay memory's rules. The
// threads the gateway holds whole share one room of weight, whoever they
// are for (wholethread.go).
package gateway
