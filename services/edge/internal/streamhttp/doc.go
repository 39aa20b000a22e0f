// Package streamhttp owns what MCP over HTTP needs around the SDK's
// stateless handler: SSE keep-alive comments on long response streams, and
// the lifetime of each tools/call, so that a dropped connection or a
// 2025-era client's notifications/cancelled (which arrives on another POST)
// still cancels the call's model request. The SDK's stateless mode issues
// no session ids, so this package mints them on initialize: a cancellation
// only ever reaches a call of the session that sent it.
package streamhttp
