// Package stdio carries MCP over a client's stdin and stdout, one JSON-RPC
// message per line, answering a line that is not one with a JSON-RPC error
// and reading on, where the go-sdk's own stdio transport ends the session.
package stdio
