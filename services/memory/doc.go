// Package memory is the zen memory service module: conversation threads,
// their turns, TTL and turn limit, and history selection within a token
// budget. The binary wires it through the server package.
package memory
