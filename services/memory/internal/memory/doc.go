// Package memory owns the thread model, the Store interface every backend
// implements, and the rules on top of it: ids, TTL, the turn limit, access by
// client identity and history selection; and what the stores keep decoded
// between reads (TurnCache, Heads), with the bounds on it.
package memory
