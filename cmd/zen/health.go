package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// runHealth checks a running zen, for container health checks and scripts
// where no shell or curl exists: a gRPC role's health service, or an HTTP
// role's readiness. It exits 0 when the target is serving.
func runHealth(ctx context.Context, args []string, getenv config.Getenv, stderr io.Writer) error {
	fs := flag.NewFlagSet("zen health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	grpcAddr := fs.String("grpc", "", "host:port of a gRPC role (memory, router, executor)")
	service := fs.String("service", "", "the gRPC service to ask about (default: the whole server)")
	httpURL := fs.String("http", "", "URL to GET, e.g. http://127.0.0.1:8080/readyz (edge, gateway)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for an answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*grpcAddr == "") == (*httpURL == "") {
		return fmt.Errorf("zen health needs exactly one of --grpc host:port or --http URL")
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *httpURL != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, *httpURL, nil)
		if err != nil {
			return fmt.Errorf("--http %q: %w", *httpURL, err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("%s: %w", *httpURL, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s %s", *httpURL, res.Status, body)
		}
		return nil
	}
	// Health needs no service token, but a server that talks mutual TLS
	// answers only a client with a certificate: the role's own.
	sec, err := serve.LoadSecurity(getenv)
	if err != nil {
		return err
	}
	// Without the connection's own health checking (serve's service
	// config), which would refuse to call a server that says NOT_SERVING:
	// asking it is the point, and its answer says why.
	conn, err := serve.Dial(*grpcAddr, append(sec.DialOptions(), grpc.WithDisableHealthCheck())...)
	if err != nil {
		return fmt.Errorf("--grpc %q: %w", *grpcAddr, err)
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: *service})
	if err != nil {
		return fmt.Errorf("%s: %w", *grpcAddr, err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("%s: %s", *grpcAddr, resp.GetStatus())
	}
	return nil
}
