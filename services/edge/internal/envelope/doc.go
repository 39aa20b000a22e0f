// Package envelope owns reading a JSON-RPC message's envelope (its id, its
// method, and the request a cancellation names) as the MCP SDK reads it:
// by members' exact names. encoding/json matches a struct's fields without
// regard to case and takes the last of a name given twice, so a body that
// held "METHOD" beside "method" read to zen as another message than the
// SDK ran: a call went untracked, and ran on after its client had left.
package envelope
