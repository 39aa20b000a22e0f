// Package origin records in a gRPC status which part of the system a
// failure came from: the model's provider, or a role beyond the one that
// reports it (the router, when the executor's call to it broke). The edge,
// which words every failure for the user, reads it to blame the right part
// instead of the role that merely passed the failure on.
package origin
