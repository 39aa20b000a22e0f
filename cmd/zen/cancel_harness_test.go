package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// What TestSecurityCancel needs around the fake model and the SDK client.

// Markers the gated model reacts to, followed by random text so that each
// case's prompts are its own.
const (
	victimMarker = "zen-victim-"
	stallMarker  = "zen-stall-"
)

// gatedModel is the fake model with gates: a prompt holding a marker that
// hold registered waits for its release and then answers "answer for
// <marker>"; a prompt holding stallMarker waits until its client leaves.
type gatedModel struct {
	*fakemodel.Server
	mu    sync.Mutex
	gates map[string]chan struct{}
}

func newGatedModel(t *testing.T) *gatedModel {
	m := &gatedModel{Server: fakemodel.New(t), gates: map[string]chan struct{}{}}
	m.SetReply(m.reply)
	return m
}

func (m *gatedModel) reply(r fakemodel.Request) fakemodel.Reply {
	text := r.AllText()
	m.mu.Lock()
	var gate chan struct{}
	var marker string
	for k, g := range m.gates {
		if strings.Contains(text, k) {
			gate, marker = g, k
		}
	}
	m.mu.Unlock()
	switch {
	case gate != nil:
		<-gate
		return fakemodel.Reply{Content: "answer for " + marker}
	case strings.Contains(text, stallMarker):
		return fakemodel.Reply{Stall: true}
	}
	return fakemodel.Reply{Content: "ok"}
}

// hold keeps prompts holding marker waiting until release is called, or the
// test ends.
func (m *gatedModel) hold(t *testing.T, marker string) (release func()) {
	gate := make(chan struct{})
	m.mu.Lock()
	m.gates[marker] = gate
	m.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(release)
	return release
}

// waitArrived waits until a model request holding marker came in: the call
// that sent it is in flight.
func (m *gatedModel) waitArrived(t *testing.T, marker string) {
	t.Helper()
	waitFor(t, 20*time.Second, "a model request for "+marker, func() bool { return m.find(marker, false) })
}

// waitCancelled waits until zen dropped the model request holding marker.
func (m *gatedModel) waitCancelled(t *testing.T, marker string) {
	t.Helper()
	waitFor(t, 20*time.Second, "the cancellation of the model request for "+marker,
		func() bool { return m.find(marker, true) })
}

func (m *gatedModel) find(marker string, cancelled bool) bool {
	for _, r := range m.Requests() {
		if strings.Contains(r.AllText(), marker) && (r.Cancelled || !cancelled) {
			return true
		}
	}
	return false
}

// recv takes a value from ch, failing the test after 20 s.
func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("waited 20 s for %s", what)
		panic("unreachable")
	}
}

// rpcLog is an SDK client's HTTP transport: it adds the bearer token, and
// notes the ids the SDK gives its tools/call requests and when zen has
// answered its first notifications/cancelled.
type rpcLog struct {
	token      string
	next       http.RoundTripper
	cancelSent chan struct{}

	mu       sync.Mutex
	calls    []string
	cancelGo chan struct{} // notifications/cancelled waits until it closes
	notify   sync.Once
}

func newRPCLog(token string) *rpcLog {
	open := make(chan struct{})
	close(open)
	return &rpcLog{token: token, next: http.DefaultTransport, cancelGo: open, cancelSent: make(chan struct{})}
}

// holdCancels keeps the client's notifications/cancelled from leaving until
// release: on a real network one can arrive after zen saw the cancelled
// call's exchange close, and a test can make it so.
func (l *rpcLog) holdCancels() (release func()) {
	held := make(chan struct{})
	l.mu.Lock()
	l.cancelGo = held
	l.mu.Unlock()
	return sync.OnceFunc(func() { close(held) })
}

func (l *rpcLog) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if l.token != "" {
		r.Header.Set("Authorization", "Bearer "+l.token)
	}
	var msg struct {
		ID     json.RawMessage
		Method string
	}
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		_ = json.Unmarshal(body, &msg)
	}
	if msg.Method == "tools/call" {
		l.mu.Lock()
		l.calls = append(l.calls, string(msg.ID))
		l.mu.Unlock()
	}
	if msg.Method == "notifications/cancelled" {
		l.mu.Lock()
		held := l.cancelGo
		l.mu.Unlock()
		select {
		case <-held:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	res, err := l.next.RoundTrip(r)
	if msg.Method == "notifications/cancelled" && err == nil {
		l.notify.Do(func() { close(l.cancelSent) })
	}
	return res, err
}

// lastCall is the JSON-RPC id of the latest tools/call, as raw JSON.
func (l *rpcLog) lastCall() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.calls) == 0 {
		return ""
	}
	return l.calls[len(l.calls)-1]
}
