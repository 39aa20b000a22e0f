package serve

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// A caller without the service token is refused when its call's headers
// arrive, not after the server has read its message: grpc-go reads a unary
// call's whole message before any interceptor runs, so a caller with no
// token could otherwise have the server buffer MaxMessageBytes on each of
// as many streams as it opens.
func TestACallWithoutTheTokenIsRefusedBeforeItsMessageIsRead(t *testing.T) {
	t.Parallel()
	sec, err := LoadSecurity(func(k string) string {
		return map[string]string{"ZEN_SERVICE_TOKEN": "service-token-0123456789"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	g := NewGRPC(sec.ServerOptions()...)
	g.RegisterService(fakeZenService(fakeMemory, []string{"GetThread"}, "ExportThreads", &replica{handle: ok}), nil)
	addr := serveOnLoopback(t, g)

	// A raw HTTP/2 client, to send the start of a message and no more.
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	h2c := &http.Transport{Protocols: &h2}
	defer h2c.CloseIdleConnections()
	body, send := io.Pipe()
	defer send.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/"+fakeMemory+"/GetThread", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	go func() {
		// A message that says it is 32 MiB long, then 16 of its bytes.
		_, _ = send.Write([]byte{0, 0x02, 0, 0, 0})
		_, _ = send.Write(make([]byte, 16))
	}()
	resp, err := h2c.RoundTrip(req)
	if err != nil {
		t.Fatalf("no answer while the message was unfinished (the server waits to read it): %v", err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Grpc-Status"); got != "16" {
		t.Errorf("grpc-status %q (%s), want 16, Unauthenticated", got, resp.Header.Get("Grpc-Message"))
	}
}
