// Package edge is the zen edge service module: the MCP front door over stdio
// and streamable HTTP, reading the user's files, and orchestrating one tool
// call across memory, router and executor. The binary wires it through the
// server package.
package edge
