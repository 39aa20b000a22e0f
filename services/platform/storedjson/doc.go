// Package storedjson owns the bounds of the JSON values memory keeps beside
// a thread's text: a thread's initial context (its first call's arguments),
// a workflow state, a turn's model metadata. Memory refuses a value past
// them; the edge refuses, before its model runs, a call whose arguments a
// new thread could not keep.
package storedjson
