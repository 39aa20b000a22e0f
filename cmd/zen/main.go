package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/zenmcp/zen/services/platform/telemetry"
)

// Set at build time with -ldflags "-X main.version=... -X main.commit=...
// -X main.updated=...": make build stamps the release tag (or dev), the
// commit and its date, each once. A plain go build says dev and unknown.
var (
	version = "dev"
	commit  = "unknown"
	updated = ""
)

// grpcLog is gRPC's logger in a zen process, which run points at the
// process's own; nil where run is called without main (tests), so that
// gRPC's global logger is never set beside the gRPC it serves.
var grpcLog *telemetry.GRPCLog

func main() {
	grpcLog = telemetry.InstallGRPCLog() // before anything runs gRPC
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tuneGC(os.Getenv, os.Args[1:])
	err := run(ctx, os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return // -h or --help: the flags are printed, as asked
	}
	if err != nil {
		// Scrubbed like every log line: a startup error may quote a value.
		fmt.Fprintln(os.Stderr, "zen:", loadSecrets(os.Getenv, dotEnvFiles(os.Getenv, command(os.Args[1:]))...).
			String(err.Error()))
		os.Exit(1)
	}
}

// command is the command args name (the role, for most), or "" for none.
func command(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
