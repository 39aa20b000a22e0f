// Package mcpserver is zen's MCP front door: it registers the executor's
// tools with the go-sdk server, runs each call, sends progress, and maps
// backend results to MCP replies in one place (errors.go).
package mcpserver
