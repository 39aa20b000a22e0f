// Package slots bounds how many of one kind of work each client has
// running at once: a client is a verified token's name (or, without
// tokens, every caller), and each has slots of its own, so that one
// client's load holds up only itself.
package slots
