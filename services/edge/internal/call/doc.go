// Package call runs one tool call the way DESIGN.md section 3 lays out:
// validate, load the thread, resolve the model, read files, select history,
// execute, store the exchange, and build the reply the client sees.
package call
