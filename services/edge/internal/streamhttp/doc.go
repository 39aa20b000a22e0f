// Package streamhttp owns what MCP over HTTP needs around the SDK's
// stateless handler: SSE keep-alive comments on long response streams, and
// the lifetime of each tools/call, so that a dropped connection or a
// 2025-era client's notifications/cancelled (which arrives on another POST,
// with no session to route it) still cancels the call's model request.
package streamhttp
