// Package grpcapi serves zen.memory.v1.MemoryService: it converts between
// proto messages and the memory package's types and turns domain errors into
// gRPC status codes, in one place.
package grpcapi
