// Package tools defines zen's MCP tools: their schemas, categories and
// annotations, and what each does when called.
package tools
