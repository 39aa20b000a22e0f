package provider

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTransportSpeaksHTTP2WhereOffered: a provider that offers HTTP/2 (over
// TLS, as every hosted one does) is spoken to in it, so concurrent calls
// share a connection.
func TestTransportSpeaksHTTP2WhereOffered(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tr := newTransport(HTTPOptions{Connect: 5 * time.Second})
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "HTTP/2.0" {
		t.Errorf("the provider saw %s, want HTTP/2.0", body)
	}
}
