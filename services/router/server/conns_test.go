package server

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestConcurrentCallsReuseProviderConnections: 64 callers calling at once
// through the router open about one connection each to the provider, not
// one per call, so a busy router spends neither CPU nor TLS handshakes on
// dialing; ZEN_PROVIDER_MAX_IDLE_CONNS sets how many it keeps.
func TestConcurrentCallsReuseProviderConnections(t *testing.T) {
	t.Parallel()
	const callers, callsEach = 64, 4
	tests := []struct {
		name string
		env  map[string]string
		ok   func(conns int) bool
		want string
	}{
		{"by default, about one per caller", nil,
			func(conns int) bool { return conns <= callers*3/2 }, fmt.Sprintf("at most %d", callers*3/2)},
		{"ZEN_PROVIDER_MAX_IDLE_CONNS=2 keeps two, so most calls dial",
			map[string]string{"ZEN_PROVIDER_MAX_IDLE_CONNS": "2"},
			func(conns int) bool { return conns > callers*2 }, fmt.Sprintf("more than %d", callers*2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			env := map[string]string{"CUSTOM_API_URL": fake.URL()}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, err := load(t, env)
			if err != nil {
				t.Fatal(err)
			}
			client := serveRouter(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errs := make(chan error, callers)
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					for range callsEach {
						if err := generateOnce(ctx, client); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if conns := fake.Conns(); !tt.ok(conns) {
				t.Errorf("%d callers making %d calls opened %d connections to the provider, want %s",
					callers, callers*callsEach, conns, tt.want)
			}
		})
	}
}

// generateOnce makes one streaming call and reads it to its end.
func generateOnce(ctx context.Context, client routerv1.RouterServiceClient) error {
	stream, err := client.Generate(ctx, &routerv1.GenerateRequest{Model: "llama3.2",
		Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			return err
		}
		if msg.GetDone() != nil {
			_, err := stream.Recv()
			if err != io.EOF {
				return fmt.Errorf("after the reply: %v, want the stream's end", err)
			}
			return nil
		}
	}
}

// TestMaxIdleConnsVariable: ZEN_PROVIDER_MAX_IDLE_CONNS is a whole number
// of connections; a bad one names the variable.
func TestMaxIdleConnsVariable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    int
		wantErr string
	}{
		{"", 256, ""},
		{"64", 64, ""},
		{"0", 0, `ZEN_PROVIDER_MAX_IDLE_CONNS="0": want a whole number from 1 to 100000`},
		{"many", 0, `ZEN_PROVIDER_MAX_IDLE_CONNS="many": want a whole number`},
	}
	for _, tt := range tests {
		cfg, err := load(t, map[string]string{"ZEN_PROVIDER_MAX_IDLE_CONNS": tt.raw})
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err = %v, want %q", tt.raw, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.raw, err)
		case cfg.MaxIdleConns != tt.want:
			t.Errorf("%q: MaxIdleConns = %d, want %d", tt.raw, cfg.MaxIdleConns, tt.want)
		}
	}
}
