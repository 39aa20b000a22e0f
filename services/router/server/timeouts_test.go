package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
)

// TestReferenceTimeoutVariables: the reference's CUSTOM_*_TIMEOUT variables
// (seconds, fractions allowed) set zen's HTTP timeouts; zen's own idle
// timeout wins over the read timeout; a bad value names its variable.
func TestReferenceTimeoutVariables(t *testing.T) {
	t.Parallel()
	type timeouts struct{ Connect, Pool, Write, Idle time.Duration }
	tests := []struct {
		name    string
		env     map[string]string
		want    timeouts
		wantErr string
	}{
		{"defaults", nil, timeouts{Connect: 30 * time.Second, Idle: 5 * time.Minute}, ""},
		{"seconds, as the reference writes them", map[string]string{"CUSTOM_CONNECT_TIMEOUT": "45",
			"CUSTOM_READ_TIMEOUT": "900", "CUSTOM_WRITE_TIMEOUT": "2.5", "CUSTOM_POOL_TIMEOUT": "600.0"},
			timeouts{Connect: 45 * time.Second, Pool: 10 * time.Minute, Write: 2500 * time.Millisecond,
				Idle: 15 * time.Minute}, ""},
		{"Go durations", map[string]string{"CUSTOM_READ_TIMEOUT": "30m", "CUSTOM_CONNECT_TIMEOUT": "1m"},
			timeouts{Connect: time.Minute, Idle: 30 * time.Minute}, ""},
		{"ZEN_PROVIDER_IDLE_TIMEOUT wins over CUSTOM_READ_TIMEOUT",
			map[string]string{"CUSTOM_READ_TIMEOUT": "1800", "ZEN_PROVIDER_IDLE_TIMEOUT": "2m"},
			timeouts{Connect: 30 * time.Second, Idle: 2 * time.Minute}, ""},
		{"not a number", map[string]string{"CUSTOM_READ_TIMEOUT": "ten"}, timeouts{},
			`CUSTOM_READ_TIMEOUT="ten": want a number of seconds from 0.1 to 86400, such as 600 or 2.5`},
		{"zero", map[string]string{"CUSTOM_CONNECT_TIMEOUT": "0"}, timeouts{}, `CUSTOM_CONNECT_TIMEOUT="0": want a number`},
		{"negative", map[string]string{"CUSTOM_POOL_TIMEOUT": "-5"}, timeouts{}, `CUSTOM_POOL_TIMEOUT="-5": want a number`},
		{"over a day", map[string]string{"CUSTOM_WRITE_TIMEOUT": "90000"}, timeouts{},
			`CUSTOM_WRITE_TIMEOUT="90000": want a number`},
		{"a bad read timeout is an error even where zen's wins",
			map[string]string{"CUSTOM_READ_TIMEOUT": "soon", "ZEN_PROVIDER_IDLE_TIMEOUT": "2m"}, timeouts{},
			`CUSTOM_READ_TIMEOUT="soon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := load(t, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := timeouts{Connect: cfg.HTTP.Connect, Pool: cfg.HTTP.Pool, Write: cfg.HTTP.Write, Idle: cfg.Policy.IdleTimeout}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("timeouts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCustomReadTimeoutBoundsTheRead: a reference .env's read timeout ends
// an attempt whose server sends nothing for that long, well before zen's
// own default would.
func TestCustomReadTimeoutBoundsTheRead(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Stall: true} })
	cfg, err := load(t, map[string]string{"CUSTOM_API_URL": fake.URL(), "CUSTOM_READ_TIMEOUT": "0.3",
		"ZEN_PROVIDER_ATTEMPTS": "1"})
	if err != nil {
		t.Fatal(err)
	}
	client := serveRouter(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := client.Generate(ctx, &routerv1.GenerateRequest{Model: "llama3.2",
		Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = stream.Recv()
	}
	if errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "the provider sent nothing for 300ms") {
		t.Fatalf("err = %v, want the attempt ended by CUSTOM_READ_TIMEOUT", err)
	}
	fake.WaitCancelled(t, 0)
}

// serveRouter runs the router cfg describes over an in-process gRPC
// connection.
func serveRouter(t *testing.T, cfg Config) routerv1.RouterServiceClient {
	t.Helper()
	srv, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	srv.Register(gs)
	conn, stop, err := serve.NewInProcess().Serve(gs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return routerv1.NewRouterServiceClient(conn)
}
