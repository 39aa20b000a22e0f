// Command zen runs the zen MCP server. One binary runs any role: serve (all
// roles in one process, MCP over HTTP), stdio (MCP over stdin/stdout), or
// one of edge, memory, router, executor and gateway for a cluster.
package main
