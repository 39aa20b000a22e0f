package serve

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	_ "google.golang.org/grpc/encoding/gzip" // the binary has it: the OTLP exporter registers it
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

	resp := startUnfinishedCall(t, addr, "/"+fakeMemory+"/GetThread", "")
	defer resp.Body.Close()
	if got := resp.Header.Get("Grpc-Status"); got != "16" {
		t.Errorf("grpc-status %q (%s), want 16, Unauthenticated", got, resp.Header.Get("Grpc-Message"))
	}
}

// Health needs no credential, so the check at the headers lets it through;
// a compressed health call is refused there instead. Probes never
// compress, and the binary decodes gzip (the OTLP exporter registers it):
// without this a caller with no token could have a few KiB inflate to
// MaxMessageBytes, held for as long as it kept the stream open.
func TestACompressedHealthCallIsRefusedBeforeItsMessageIsRead(t *testing.T) {
	t.Parallel()
	sec, err := LoadSecurity(func(k string) string {
		return map[string]string{"ZEN_SERVICE_TOKEN": "service-token-0123456789"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := serveOnLoopback(t, NewGRPC(sec.ServerOptions()...))
	resp := startUnfinishedCall(t, addr, "/grpc.health.v1.Health/Check", "gzip")
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body) // for the trailers
	got := resp.Header.Get("Grpc-Status") + resp.Trailer.Get("Grpc-Status")
	msg := resp.Header.Get("Grpc-Message") + resp.Trailer.Get("Grpc-Message")
	if got != "1" {
		t.Errorf("grpc-status %q (%s), want 1, Canceled: the stream ended before its message was read", got, msg)
	}
}

// startUnfinishedCall starts a call to method with a raw HTTP/2 client,
// sends the first 16 bytes of a message that says it is 32 MiB long
// (compressed with encoding, unless it is empty) and no more, and returns
// the answer. It fails the test when none comes within 10 s: the server is
// waiting to read the message.
func startUnfinishedCall(t *testing.T, addr, method, encoding string) *http.Response {
	t.Helper()
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	h2c := &http.Transport{Protocols: &h2}
	t.Cleanup(h2c.CloseIdleConnections)
	body, send := io.Pipe()
	t.Cleanup(func() { send.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+method, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	compressed := byte(0)
	if encoding != "" {
		req.Header.Set("Grpc-Encoding", encoding)
		compressed = 1
	}
	go func() {
		_, _ = send.Write([]byte{compressed, 0x02, 0, 0, 0})
		_, _ = send.Write(make([]byte, 16))
	}()
	resp, err := h2c.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s: no answer while the message was unfinished (the server waits to read it): %v", method, err)
	}
	return resp
}
