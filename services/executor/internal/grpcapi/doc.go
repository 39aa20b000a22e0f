// Package grpcapi serves zen.executor.v1.ExecutorService: it lists the
// tools with schemas that reflect the models on offer, and runs a tool call
// while streaming its progress.
package grpcapi
