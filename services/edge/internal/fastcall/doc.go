// Package fastcall answers the one request an agent makes all day, a
// tools/call over streamable HTTP, without the go-sdk's per-request
// machinery: the stateless handler builds a session, a JSON-RPC connection
// and their goroutines for every POST, and decodes the body about five
// times, each decode with a fresh 32 KB buffer. Here the body is scanned
// once for what would read differently to the SDK's decoder (nesting,
// members given twice), a scan that also keeps the envelope's and its
// params' members as they stand; json.Valid checks the syntax, and
// encoding/json decodes only the values read (id, name, _meta); and the
// tool's handler (the one the SDK would call) runs on the request's
// goroutine.
//
// Only requests whose every detail is known to lead the SDK to a plain
// call of that handler are answered here: a single JSON-RPC call of a
// known tool, on a protocol version the handler was checked against, with
// the headers and _meta that version requires, and nothing the SDK would
// refuse or read otherwise. A call that asks for progress (a progress
// token) gets its notifications as events on its answer's stream, as the
// SDK's session sends them (mcpserver.WithProgressSink), then its answer.
// Everything else, the handshake, lists, resources, batches and every
// malformed request, goes to the SDK, which answers as it always has.
//
// The reply is the SDK's, to the byte: its encoders' bytes (reply.go
// writes zen's plain results in one pass: FuzzPlainAnswer), its SSE
// events, its headers and status codes. One difference is deliberate: an
// answer that opens its stream is sent with its length rather than
// chunked, which saves a write and reads the same to every client (the
// SDK's reads the stream to its end). TestFastCallsAnswerAsTheSDK, in
// the edge's server package, holds both paths to that, for go-sdk v1.8.0
// (TestSDKVersion says when to check again). A handler that panics ends
// its own request, where under the SDK it ended the process.
package fastcall
