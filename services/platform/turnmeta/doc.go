// Package turnmeta owns the keys zen keeps in a stored turn's
// model_metadata for readers outside the service that wrote them: what the
// turn's model call used ("usage") and the workflow step a user turn
// records ("step"), both written by the executor, and the trace id of the
// exchange ("trace_id"), written by the edge. The gateway's thread browser
// reads all three. Each has a typed value here and one Put and one Read, so
// a key is spelt in one place.
//
// Metadata also arrives through imports, which may hold anything under
// these keys: Read never fails, and reads numbers no model call or step can
// have (not finite, negative, absurdly large) as 0 or the largest it allows.
package turnmeta
