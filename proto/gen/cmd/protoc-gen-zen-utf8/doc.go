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
// checked. Messages of packages this run does not generate (the
// well-known types) get a function of their own in each package that
// holds one. Editions files and messages with extensions are refused at
// generation, so a new kind of field cannot pass unchecked.
package main
