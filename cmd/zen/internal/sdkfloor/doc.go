// Command sdkfloor is the least an MCP server built on the go-sdk can do
// for a chat call, for BenchmarkContinuedChat to measure beside zen: the
// SDK's stateless streamable HTTP handler, with the edge's transport
// options, and a chat tool (its input schema from SDKFLOOR_INPUT_SCHEMA)
// that streams one completion from the model at CUSTOM_API_URL, reads it
// to the end and answers with a continuation. It keeps no thread, checks
// nothing and records nothing: what it costs is the SDK, one HTTP request
// to the model, and the process.
//
// It logs one JSON line, {"msg":"listening","listener":"mcp","addr":...},
// on stderr when it serves, and stops on SIGTERM or SIGINT.
package main
