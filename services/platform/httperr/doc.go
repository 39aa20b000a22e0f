// Package httperr owns the one shape of zen's HTTP errors. Whatever refuses
// or fails an HTTP request, on the gateway or on the edge's listener (a
// wrong Host, a missing token, an unknown path, a body of the wrong type,
// a failed call behind a route, the MCP SDK refusing a request's headers),
// the answer is a google.rpc.Status in JSON:
//
//	{"code":5,"message":"thread ... was not found","details":[]}
//
// compact, on one line, with the HTTP status that grpc-gateway gives the
// code. Why this shape: the gateway's generated routes answer it already
// and its OpenAPI document declares it (rpcStatus) for every route; the
// code is the one the same call gets over gRPC, so a client, grpcurl and
// the logs share one table of codes; and clients of grpc-gateway services
// know it. The spacing is fixed here rather than left to protojson, which
// varies its spaces on purpose.
//
// One thing answers otherwise: a JSON-RPC message the MCP endpoint read
// and refuses (too large, say) gets JSON-RPC's own error response with the
// message's id, which MCP clients decode and match to their call
// (mcpserver.WriteRefusal).
package httperr
