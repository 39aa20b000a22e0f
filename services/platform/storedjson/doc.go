// Package storedjson owns the bounds of what memory keeps of a thread: the
// JSON values beside its text (a thread's initial context, its first
// call's arguments; a workflow state; a turn's model metadata), and a
// turn's text. Memory refuses a value past
// them; the edge refuses, before its model runs, a call whose arguments a
// new thread could not keep.
package storedjson
