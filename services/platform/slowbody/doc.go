// Package slowbody is a test client that sends a request's body a byte at
// a time, as an attacker holding a server's connections does, and reports
// what the server did: answered, and whether it then let the connection go.
// Its NarrowServer is the other side: a server whose answers wait on a
// client that reads slowly or not at all, telling when it lets one go.
package slowbody
