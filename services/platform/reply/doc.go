// Package reply owns the shape of what a tool call returns to its client:
// the JSON object sent as the result's text and as its structured content.
// The executor's tools build replies; the edge adds only what transport
// knows (the trace id, the continuation offer once the exchange is stored,
// the output cap, the files it left out, the code file it wrote) and words
// its own refusals, made before a tool runs, with the same constructors. So
// the error envelope and the workflow failure are written here, once.
package reply
