// Command protoc-gen-zen-utf8 is a protoc plugin, run by make gen beside
// protoc-gen-go, that gives every generated message a ValidUTF8 method:
// whether each string proto.Marshal requires to be UTF-8 is, found by
// reading the fields directly. Roles that share a process hand messages
// over without encoding them, yet must refuse what a network's codec
// would; this check costs a fraction of marshalling the message to find
// out (services/platform/serve, sendable).
//
// The rule is protobuf-go's: a proto3 string, alone, repeated, in a oneof
// or as a map's key or value, at any depth; proto2's strings are not
// checked, nor anything under a nil message or oneof wrapper. A message of
// a package this run does not generate (a well-known type) gets a
// function of its own in each package that holds one; buf runs the plugin
// once with all of zen's packages (strategy: all), so theirs call each
// other's methods. A message that holds, at any depth, a message of an editions
// file (whose UTF-8 rule is a feature) or one with extensions is refused
// at generation, so that no string passes unchecked.
package main
