package serve

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/stats"
	grpcstatus "google.golang.org/grpc/status"
)

// isHealth reports whether method is the health service's: it needs no
// credential, and is left out of traces and metrics.
func isHealth(method string) bool { return strings.HasPrefix(method, "/grpc.health.v1.Health/") }

// A health call that is compressed is refused before its message is read.
// Health needs no credential, so a caller with no token could otherwise
// send a few KiB of gzip (which the binary decodes: the OTLP exporter
// registers it) that inflate to MaxMessageBytes, held while it kept the
// stream open. Probes never compress. The compression is known only once
// gRPC reports the call's headers to its stats handlers, on the call's own
// goroutine just before its handler: healthCompression marks the call
// there, and guardedHealth's methods refuse a marked call before they read.

var errCompressedHealth = grpcstatus.Error(codes.InvalidArgument,
	"zen's health service takes requests uncompressed: send it without grpc-encoding")

// healthCall is a health call's mark.
type healthCall struct{ compressed bool }

type healthCallKey struct{}

// healthCompression is the stats handler that marks compressed health calls.
type healthCompression struct{}

func (healthCompression) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	if !isHealth(info.FullMethodName) {
		return ctx
	}
	return context.WithValue(ctx, healthCallKey{}, &healthCall{})
}

func (healthCompression) HandleRPC(ctx context.Context, s stats.RPCStats) {
	in, ok := s.(*stats.InHeader)
	if !ok || in.Compression == "" || in.Compression == encoding.Identity {
		return
	}
	if call, ok := ctx.Value(healthCallKey{}).(*healthCall); ok {
		call.compressed = true // read by the handler, on this goroutine
	}
}

func (healthCompression) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (healthCompression) HandleConn(context.Context, stats.ConnStats) {}

// guardedHealth is the health service's description with every method
// refusing a compressed call before it reads the message. (It skips
// RegisterHealthServer's check that the server embeds
// UnimplementedHealthServer by value: health.Server does.)
func guardedHealth() *grpc.ServiceDesc {
	desc := healthpb.Health_ServiceDesc
	desc.Methods = slices.Clone(desc.Methods)
	for i, m := range desc.Methods {
		next := m.Handler
		desc.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error,
			interceptor grpc.UnaryServerInterceptor) (any, error) {
			if compressedHealthCall(ctx) {
				return nil, errCompressedHealth
			}
			return next(srv, ctx, dec, interceptor)
		}
	}
	desc.Streams = slices.Clone(desc.Streams)
	for i, st := range desc.Streams {
		next := st.Handler
		desc.Streams[i].Handler = func(srv any, stream grpc.ServerStream) error {
			if compressedHealthCall(stream.Context()) {
				return errCompressedHealth
			}
			return next(srv, stream)
		}
	}
	return &desc
}

// compressedHealthCall reports whether healthCompression marked the call.
func compressedHealthCall(ctx context.Context) bool {
	call, ok := ctx.Value(healthCallKey{}).(*healthCall)
	return ok && call.compressed
}
