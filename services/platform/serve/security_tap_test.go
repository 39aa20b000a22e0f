package serve

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
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
	g := NewGRPC(tokenSecurity(t).ServerOptions()...)
	g.RegisterService(fakeZenService(fakeMemory, []string{"GetThread"}, "ExportThreads", &replica{handle: ok}), nil)
	addr := serveOnLoopback(t, g)
	resp := startUnfinishedCall(t, h2cTransport(t), addr, "/"+fakeMemory+"/GetThread", "")
	if code, msg := grpcStatus(resp); code != "16" {
		t.Errorf("grpc-status %q (%s), want 16, Unauthenticated", code, msg)
	}
}

// Health needs no credential, so the check at the headers lets it through;
// a compressed health call is refused before its message is read instead.
// Probes never compress, and the binary decodes gzip (the OTLP exporter
// registers it): without this a caller with no token could have a few KiB
// inflate to MaxMessageBytes, held for as long as it kept the stream open.
func TestACompressedHealthCallIsRefusedBeforeItsMessageIsRead(t *testing.T) {
	t.Parallel()
	addr := serveOnLoopback(t, NewGRPC(tokenSecurity(t).ServerOptions()...))
	h2c := h2cTransport(t)
	resp := startUnfinishedCall(t, h2c, addr, "/grpc.health.v1.Health/Check", "gzip")
	if code, msg := grpcStatus(resp); code != "3" || !strings.Contains(msg, "uncompressed") {
		t.Errorf("grpc-status %q (%s), want 3, InvalidArgument, asking for it uncompressed", code, msg)
	}
	// A whole message sent with its headers is there to be read at once:
	// ending the stream alone lost that race about half the time.
	var whole bytes.Buffer
	zw := gzip.NewWriter(&whole)
	_, _ = zw.Write([]byte{0x0a, 0x01, 'x'}) // HealthCheckRequest{service: "x"}
	_ = zw.Close()
	message := append([]byte{1, 0, 0, 0, byte(whole.Len())}, whole.Bytes()...)
	for i := range 30 {
		for _, method := range []string{"Check", "Watch", "List"} {
			resp := callWith(t, h2c, addr, "/grpc.health.v1.Health/"+method, "gzip", bytes.NewReader(message))
			if code, msg := grpcStatus(resp); code != "3" {
				t.Fatalf("call %d to %s: grpc-status %q (%s), want 3, InvalidArgument", i, method, code, msg)
			}
		}
	}
	// Uncompressed, health answers as before.
	resp = callWith(t, h2c, addr, "/grpc.health.v1.Health/Check", "", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
	if code, msg := grpcStatus(resp); code != "0" {
		t.Errorf("an uncompressed Check: grpc-status %q (%s), want 0", code, msg)
	}
}

func tokenSecurity(t *testing.T) Security {
	t.Helper()
	sec, err := LoadSecurity(func(k string) string {
		return map[string]string{"ZEN_SERVICE_TOKEN": "service-token-0123456789"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

// h2cTransport is a raw HTTP/2 client without TLS, to send gRPC frames as
// a hostile caller would.
func h2cTransport(t *testing.T) *http.Transport {
	var h2 http.Protocols
	h2.SetUnencryptedHTTP2(true)
	h2c := &http.Transport{Protocols: &h2}
	t.Cleanup(h2c.CloseIdleConnections)
	return h2c
}

// grpcStatus reads the answer to its end, closes it, and returns its gRPC
// status and message, from the trailers or, in a trailers-only answer, the
// headers.
func grpcStatus(resp *http.Response) (code, msg string) {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return cmp.Or(resp.Trailer.Get("Grpc-Status"), resp.Header.Get("Grpc-Status")),
		cmp.Or(resp.Trailer.Get("Grpc-Message"), resp.Header.Get("Grpc-Message"))
}

// startUnfinishedCall starts a call to method, sends the first 16 bytes of
// a message that says it is 32 MiB long (compressed with encoding, unless
// it is empty) and no more, and returns the answer. It fails the test when
// none comes within 10 s: the server is waiting to read the message.
func startUnfinishedCall(t *testing.T, h2c *http.Transport, addr, method, encoding string) *http.Response {
	t.Helper()
	body, send := io.Pipe()
	defer send.Close() // once answered: a request still sending keeps its connection busy
	compressed := byte(0)
	if encoding != "" {
		compressed = 1
	}
	go func() {
		_, _ = send.Write([]byte{compressed, 0x02, 0, 0, 0})
		_, _ = send.Write(make([]byte, 16))
	}()
	return callWith(t, h2c, addr, method, encoding, body)
}

// callWith sends a call to method, body as its messages, compressed with
// encoding unless it is empty, and returns the answer. It fails the test
// when none comes within 10 s.
func callWith(t *testing.T, h2c *http.Transport, addr, method, encoding string, body io.Reader) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+method, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	if encoding != "" {
		req.Header.Set("Grpc-Encoding", encoding)
	}
	resp, err := h2c.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s: no answer while the message was unfinished (the server waits to read it): %v", method, err)
	}
	return resp
}
