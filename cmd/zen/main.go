package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Set at build time with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tuneGC(os.Getenv)
	if err := run(ctx, os.Args[1:], os.Getenv); err != nil {
		// Scrubbed like every log line: a startup error may quote a value.
		fmt.Fprintln(os.Stderr, "zen:", loadSecrets(os.Getenv, dotEnvFile).String(err.Error()))
		os.Exit(1)
	}
}
