package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// served starts a server that answers every request with reply, and
// returns its URL, the file holding the request body the probe sends, and
// the count of bodies it received as sent.
func served(t *testing.T, status int, reply string) (url, file string, got *atomic.Int64) {
	t.Helper()
	const body = `{"model":"llama3.2","stream":true}`
	got = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); string(b) == body {
			got.Add(1)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	file = filepath.Join(t.TempDir(), "request.json")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL + "/v1/chat/completions", file, got
}

func TestProbeTimesEveryRequestOfAWholeStream(t *testing.T) {
	t.Parallel()
	url, file, got := served(t, http.StatusOK, "data: {}\n\ndata: [DONE]\n\n")
	median, err := probe(url, file)
	if err != nil {
		t.Fatal(err)
	}
	if median <= 0 {
		t.Errorf("median %v, want a time above zero", median)
	}
	if got.Load() != requests {
		t.Errorf("the server received the body %d times, want %d", got.Load(), requests)
	}
}

func TestProbeRefusesWhatIsNotAWholeStream(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		status int
		reply  string
	}{
		"an error status": {http.StatusTooManyRequests, "data: [DONE]\n\n"},
		"a cut stream":    {http.StatusOK, "data: {}\n\n"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url, file, _ := served(t, c.status, c.reply)
			if _, err := probe(url, file); err == nil || !strings.Contains(err.Error(), "not a whole stream") {
				t.Errorf("probe: %v, want an error that says it was not a whole stream", err)
			}
		})
	}
}

func TestProbeSaysWhichFileItCannotRead(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "none.json")
	if _, err := probe("http://127.0.0.1:1/", missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("probe: %v, want an error naming %s", err, missing)
	}
}
