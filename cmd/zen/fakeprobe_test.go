package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/childproc"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/latency"
)

// The fake model lives in the benchmark's own process, so a request the
// benchmark sends it never wakes another process; zen's router, and any
// client of a real provider, wakes one on every request. A copy of this
// test binary, started with fakeProbeEnv naming the URL and
// fakeProbeBodyEnv the request's file, times the fake from a process of its
// own instead of running tests (TestMain), and prints its median as
// medianPrefix and nanoseconds.
const (
	fakeProbeEnv     = "ZEN_BENCH_FAKE_PROBE_URL"
	fakeProbeBodyEnv = "ZEN_BENCH_FAKE_PROBE_BODY"
	medianPrefix     = "median_ns="
)

// streamRequests are the requests streamMedian sends, and warmRequests the
// first of them it leaves out: they open the connection and warm both
// sides.
const (
	streamRequests = 400
	warmRequests   = 100
)

// streamMedian posts body to url streamRequests times, one at a time on
// one kept-alive connection, reads each streamed reply to its end and
// returns the median time of those after the first warmRequests. A reply
// that is not a 200 stream ending with data: [DONE] is an error.
func streamMedian(url string, body []byte) (time.Duration, error) {
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer hc.CloseIdleConnections()
	times := make([]time.Duration, 0, streamRequests)
	for i := range streamRequests {
		t0 := time.Now()
		resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, fmt.Errorf("request %d to the fake: %w", i+1, err)
		}
		reply, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, fmt.Errorf("request %d to the fake: reading the reply: %w", i+1, err)
		}
		if resp.StatusCode != http.StatusOK || !bytes.HasSuffix(reply, []byte("data: [DONE]\n\n")) {
			return 0, fmt.Errorf("request %d to the fake: not a whole stream: HTTP %d, %q", i+1, resp.StatusCode,
				reply[:min(len(reply), 200)])
		}
		times = append(times, time.Since(t0))
	}
	return latency.P50(times[warmRequests:]), nil
}

// probeFake is the copy's whole work: it returns the exit code.
func probeFake(url, bodyFile string) int {
	body, err := os.ReadFile(bodyFile)
	if err == nil {
		var median time.Duration
		if median, err = streamMedian(url, body); err == nil {
			fmt.Printf("%s%d\n", medianPrefix, median.Nanoseconds())
			return 0
		}
	}
	fmt.Fprintln(os.Stderr, "fake probe:", err)
	return 1
}

// lastRequest is the request zen sent the fake last. It checks the request
// streamed and, when the calls continue threads of history turns, carried
// the history (the first prompt of every grown thread).
func (st *benchStack) lastRequest(b *testing.B, history int) fakemodel.Request {
	reqs := st.fake.Requests()
	last := reqs[len(reqs)-1]
	if !last.Stream {
		b.Fatal("zen asked the fake for a reply that does not stream")
	}
	if history > 0 && !strings.Contains(last.AllText(), "Turn 1 of a conversation") {
		b.Fatalf("the model was not sent the thread's history:\n%s", last.AllText())
	}
	return last
}

// fakeURL is where req went.
func (st *benchStack) fakeURL(req fakemodel.Request) string {
	return strings.TrimSuffix(st.fake.URL(), "/v1") + req.Path
}

// fakeOwn is the fake's own time for req from this process, which holds
// it: nothing wakes another process.
func (st *benchStack) fakeOwn(b *testing.B, req fakemodel.Request) time.Duration {
	median, err := streamMedian(st.fakeURL(req), req.Body)
	if err != nil {
		b.Fatal(err)
	}
	return median
}

// fakeApart is the fake's time for req from a process of its own, as a
// client elsewhere finds it.
func (st *benchStack) fakeApart(b *testing.B, req fakemodel.Request) time.Duration {
	file := filepath.Join(b.TempDir(), "request.json")
	if err := os.WriteFile(file, req.Body, 0o600); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$") // the flag is a safeguard: TestMain answers first
	cmd.Env = append(os.Environ(), fakeProbeEnv+"="+st.fakeURL(req), fakeProbeBodyEnv+"="+file)
	cmd.SysProcAttr = childproc.DiesWithParent()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("the fake probe (a copy of this test binary) failed: %v\n%s", err, stderr.Bytes())
	}
	got, ok := strings.CutPrefix(strings.TrimSpace(string(out)), medianPrefix)
	ns, err := strconv.ParseInt(got, 10, 64)
	if !ok || err != nil {
		b.Fatalf("the fake probe printed %q, not %s and nanoseconds (%v)", out, medianPrefix, err)
	}
	return time.Duration(ns)
}

// streamServer answers every request with reply at status, and counts the
// connections it was asked on and the requests that brought body.
func streamServer(t *testing.T, status int, reply, body string) (url string, conns, bodies *atomic.Int64) {
	t.Helper()
	conns, bodies = &atomic.Int64{}, &atomic.Int64{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got, _ := io.ReadAll(r.Body); string(got) == body {
			bodies.Add(1)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/v1/chat/completions", conns, bodies
}

func TestStreamMedianSendsEveryRequestOnOneConnection(t *testing.T) {
	t.Parallel()
	const body = `{"model":"llama3.2","stream":true}`
	url, conns, bodies := streamServer(t, http.StatusOK, "data: {}\n\ndata: [DONE]\n\n", body)
	if _, err := streamMedian(url, []byte(body)); err != nil {
		t.Fatal(err)
	}
	if got := bodies.Load(); got != streamRequests {
		t.Errorf("the server received the body %d times, want %d", got, streamRequests)
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("the requests came on %d connections, want 1", got)
	}
}

func TestStreamMedianRefusesWhatIsNotAWholeStream(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		status int
		reply  string
	}{
		"an error status":             {http.StatusTooManyRequests, "data: [DONE]\n\n"},
		"a stream cut before its end": {http.StatusOK, "data: {}\n\n"},
		"a stream that goes on":       {http.StatusOK, "data: [DONE]\n\ndata: {}\n\n"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url, _, _ := streamServer(t, c.status, c.reply, "{}")
			if _, err := streamMedian(url, []byte("{}")); err == nil || !strings.Contains(err.Error(), "not a whole stream") {
				t.Errorf("streamMedian: %v, want an error that says the reply was not a whole stream", err)
			}
		})
	}
}
