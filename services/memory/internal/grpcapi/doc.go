// Package grpcapi serves zen.memory.v1.MemoryService: it converts between
// proto messages and the memory package's types and turns domain errors into
// gRPC status codes, in one place. It bounds the whole-thread reads memory
// runs at once: a few for each client, and a budget of weight for all of
// them (reads.go).
package grpcapi
