package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"

	"github.com/zenmcp/zen/services/platform/hostguard"
	"github.com/zenmcp/zen/services/platform/serve"
)

// servePprof serves Go's profiles (net/http/pprof) under /debug/pprof/ on
// addr (ZEN_PPROF_ADDR) until stop is called: CPU, heap, goroutines,
// blocking, execution traces. The handlers are mounted on a mux of their
// own, not http.DefaultServeMux, so no other listener ever serves them.
func servePprof(addr string, hosts hostguard.Hosts, logger *slog.Logger) (stop func(), err error) {
	lis, err := listen(logger, addr, "pprof")
	if err != nil {
		return nil, fmt.Errorf("ZEN_PPROF_ADDR: %w", err)
	}
	if !hostguard.Loopback(lis.Addr().String()) {
		// The operator chose the address; say what it exposes.
		logger.Warn("pprof listens beyond loopback: whoever reaches it sees zen's command line and stacks "+
			"and can profile it", "addr", lis.Addr().String())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index) // and every named profile: heap, goroutine, ...
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{
		// Not serve.HTTP (no drain on stop), so the body deadline it gives
		// every request is given here.
		Handler:           serve.BodyDeadline(serve.BodyTime, hosts.Protect(hostguard.NotFromPages(mux))),
		ReadHeaderTimeout: serve.HeaderTime,
		MaxHeaderBytes:    serve.MaxHeaderBytes,
		IdleTimeout:       serve.IdleTime,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis) // returns once stop closes it
	}()
	// Close, not a drain: a profile being taken is no work to finish, and
	// would hold the exit for its whole duration.
	return func() { _ = srv.Close(); <-done }, nil
}
