// Package grpcapi serves zen.router.v1.RouterService: catalogue queries,
// resolution and streaming generation, with provider failures turned into
// status codes in one place.
package grpcapi
