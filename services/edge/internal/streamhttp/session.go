package streamhttp

import (
	"crypto/rand"
	"net/http"
)

// SessionHeader carries a 2025-era client's session on every request after
// initialize.
const SessionHeader = "Mcp-Session-Id"

// sessionIDLen is the length of rand.Text's output: 26 base32 characters,
// 130 random bits.
const sessionIDLen = 26

// newSessionID mints a session id. The SDK's stateless handler issues none,
// yet a 2025-era client's notifications/cancelled arrives on a POST of its
// own, and the session is the only thing that ties it to the caller's call:
// request ids repeat across clients, and a token may be shared (or absent).
// The id must be unguessable, since whoever holds it can cancel the
// session's calls, and it needs no server-side state, so any edge replica
// accepts it.
func newSessionID() string { return rand.Text() }

// sessionOf returns the session r belongs to, or "" when it has none. Only
// ids of the shape zen mints count: a short or made-up id (a client that
// sends "1" or its own name) could be the same as another client's.
func sessionOf(r *http.Request) string {
	id := r.Header.Get(SessionHeader)
	if len(id) != sessionIDLen {
		return ""
	}
	for _, c := range id {
		if !('A' <= c && c <= 'Z' || '2' <= c && c <= '7') {
			return ""
		}
	}
	return id
}
