// Package slots bounds the work of one kind that runs at once: how many
// pieces each client has running (PerClient: a client is a verified
// token's name, or, without tokens, every caller; each has slots of its
// own, so that one client's load holds up only itself), and how much they
// weigh in the whole process (Budget), which per-client bounds leave to
// the number of clients, with the clients whose work holds part of a
// budget (Holders).
package slots
