// Package call runs one tool call: validate, resolve the model when the call
// names one, ask memory once for everything the call needs (PrepareCall: the
// limits, the thread, its workflow state, the history for the model), read
// files, execute, store the exchange in one more call to memory, and add to
// the executor's reply what transport knows (trace id, continuation, cap).
package call
