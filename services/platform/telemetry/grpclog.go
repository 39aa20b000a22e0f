package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	"google.golang.org/grpc/grpclog"
)

// GRPCLog writes what gRPC and grpc-gateway log through zen's logger, as
// JSON lines like every other: their default writes plain text to stderr,
// and grpc-gateway writes a line for every answer a client stopped reading,
// which any client can cause. Their errors are warnings to zen (a client
// that left, a connection that broke: zen reports what they mean for a
// call itself), their info and warnings detail (DEBUG).
//
// It is installed once, before gRPC runs (grpclog.SetLoggerV2 is not safe
// beside it), and its logger set when the process has one; until then it
// writes nothing.
type GRPCLog struct{ logger atomic.Pointer[slog.Logger] }

// InstallGRPCLog makes a GRPCLog gRPC's logger and returns it.
func InstallGRPCLog() *GRPCLog {
	g := &GRPCLog{}
	grpclog.SetLoggerV2(g)
	return g
}

// Use has g write to l.
func (g *GRPCLog) Use(l *slog.Logger) { g.logger.Store(l.With("component", "grpc")) }

func (g *GRPCLog) log(level slog.Level, msg string) {
	if l := g.logger.Load(); l != nil {
		l.Log(context.Background(), level, msg)
	}
}

func (g *GRPCLog) Info(args ...any)   { g.log(slog.LevelDebug, fmt.Sprint(args...)) }
func (g *GRPCLog) Infoln(args ...any) { g.log(slog.LevelDebug, fmt.Sprint(args...)) }
func (g *GRPCLog) Infof(format string, args ...any) {
	g.log(slog.LevelDebug, fmt.Sprintf(format, args...))
}
func (g *GRPCLog) Warning(args ...any)   { g.log(slog.LevelDebug, fmt.Sprint(args...)) }
func (g *GRPCLog) Warningln(args ...any) { g.log(slog.LevelDebug, fmt.Sprint(args...)) }
func (g *GRPCLog) Warningf(format string, args ...any) {
	g.log(slog.LevelDebug, fmt.Sprintf(format, args...))
}
func (g *GRPCLog) Error(args ...any)   { g.log(slog.LevelWarn, fmt.Sprint(args...)) }
func (g *GRPCLog) Errorln(args ...any) { g.log(slog.LevelWarn, fmt.Sprint(args...)) }
func (g *GRPCLog) Errorf(format string, args ...any) {
	g.log(slog.LevelWarn, fmt.Sprintf(format, args...))
}

// Fatal, Fatalln and Fatalf log at ERROR and exit, as gRPC expects of them.
func (g *GRPCLog) Fatal(args ...any) { g.fatal(fmt.Sprint(args...)) }

func (g *GRPCLog) Fatalln(args ...any) { g.fatal(fmt.Sprint(args...)) }

func (g *GRPCLog) Fatalf(format string, args ...any) { g.fatal(fmt.Sprintf(format, args...)) }

func (g *GRPCLog) fatal(msg string) {
	g.log(slog.LevelError, msg)
	os.Exit(1)
}

// V reports whether gRPC's verbose logging at level l is on: never; what
// it would say is detail beyond DEBUG.
func (g *GRPCLog) V(int) bool { return false }
