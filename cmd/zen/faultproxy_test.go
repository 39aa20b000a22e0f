package main

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// faultProxy is a TCP proxy on loopback placed between two roles (or
// memory and Redis) to put faults on the wire between them: latency, a
// byte-rate limit, a black hole, and cutting every open connection. It is
// ours rather than toxiproxy's, whose library pulls in far more than these
// few faults need.
type faultProxy struct {
	lis      net.Listener
	upstream string

	mu      sync.Mutex
	latency time.Duration // added to every chunk, each way
	rate    int           // bytes per second each way; 0 means no limit
	flow    chan struct{} // closed while bytes flow; open during a black hole
	links   map[*proxyLink]struct{}
	closed  bool
}

// proxyLink is one proxied connection: the client's side and the upstream's.
type proxyLink struct {
	down net.Conn
	gone chan struct{} // closed when the link is cut

	mu sync.Mutex
	up net.Conn // nil until dialled
}

func (l *proxyLink) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.gone:
		return
	default:
	}
	close(l.gone)
	l.down.Close()
	if l.up != nil {
		l.up.Close()
	}
}

// setUp records the upstream side, or closes it when the link was cut
// while it was being dialled.
func (l *proxyLink) setUp(up net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.gone:
		up.Close()
		return false
	default:
		l.up = up
		return true
	}
}

// chunk is bytes read from one side, due on the other at due.
type chunk struct {
	data []byte
	due  time.Time
}

func startProxy(t testing.TB, upstream string) *faultProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{lis: lis, upstream: upstream, flow: make(chan struct{}), links: map[*proxyLink]struct{}{}}
	close(p.flow)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *faultProxy) Addr() string { return p.lis.Addr().String() }

// SetLatency delays every chunk read from now on by d, each way.
func (p *faultProxy) SetLatency(d time.Duration) { p.mu.Lock(); p.latency = d; p.mu.Unlock() }

// SetRate limits each direction of each connection to bytesPerSecond; 0
// lifts the limit.
func (p *faultProxy) SetRate(bytesPerSecond int) { p.mu.Lock(); p.rate = bytesPerSecond; p.mu.Unlock() }

// BlackHole stops every byte, as a partition that drops packets would:
// connections stay open and new ones are accepted, but nothing is
// forwarded (not even the dial upstream) until Heal, when what was held
// flows on, as TCP's retransmissions would deliver it.
func (p *faultProxy) BlackHole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.flow:
		p.flow = make(chan struct{})
	default:
	}
}

// Heal ends a black hole.
func (p *faultProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.flow:
	default:
		close(p.flow)
	}
}

// CutAll closes every open connection at once, mid-call for whatever is
// in flight, and says how many it cut.
func (p *faultProxy) CutAll() int {
	p.mu.Lock()
	links := make([]*proxyLink, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.cut()
	}
	return len(links)
}

func (p *faultProxy) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.lis.Close()
	p.CutAll()
}

func (p *faultProxy) settings() (latency time.Duration, rate int, flow <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency, p.rate, p.flow
}

func (p *faultProxy) serve() {
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *faultProxy) handle(down net.Conn) {
	l := &proxyLink{down: down, gone: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		down.Close()
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()
	defer func() {
		l.cut()
		p.mu.Lock()
		delete(p.links, l)
		p.mu.Unlock()
	}()
	if _, _, flow := p.settings(); !l.wait(flow, time.Time{}) {
		return
	}
	// A dead upstream is seen as a connection closed at once: what a
	// refused connection is to the client, one step later.
	up, err := net.DialTimeout("tcp", p.upstream, 2*time.Second)
	if err != nil {
		return
	}
	if !l.setUp(up) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { p.pipe(l, up, down); done <- struct{}{} }()
	go func() { p.pipe(l, down, up); done <- struct{}{} }()
	<-done
}

// pipe copies src to dst through a queue, so latency delays each chunk
// without holding back the ones read after it (an HTTP/2 connection
// multiplexes many calls). It cuts the link when either side ends.
func (p *faultProxy) pipe(l *proxyLink, dst, src net.Conn) {
	defer l.cut()
	q := make(chan chunk, 256)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 16<<10)
			n, err := src.Read(buf)
			if n > 0 {
				latency, _, _ := p.settings()
				select {
				case q <- chunk{data: buf[:n], due: time.Now().Add(latency)}:
				case <-l.gone:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		_, _, flow := p.settings()
		if !l.wait(flow, c.due) || p.write(l, dst, c.data) != nil {
			return
		}
	}
}

// write sends b, in slices of 20 ms' worth when a rate is set.
func (p *faultProxy) write(l *proxyLink, dst net.Conn, b []byte) error {
	for len(b) > 0 {
		_, rate, _ := p.settings()
		n := len(b)
		if rate > 0 {
			n = min(n, max(rate/50, 1))
		}
		if _, err := dst.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		if rate > 0 && !l.wait(nil, time.Now().Add(time.Duration(n)*time.Second/time.Duration(rate))) {
			return net.ErrClosed
		}
	}
	return nil
}

// wait waits for due, then for bytes to flow (flow nil: no black hole to
// wait for); false when the link is cut meanwhile.
func (l *proxyLink) wait(flow <-chan struct{}, due time.Time) bool {
	if d := time.Until(due); d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-l.gone:
			return false
		}
	}
	if flow != nil {
		select {
		case <-flow:
		case <-l.gone:
			return false
		}
	}
	return true
}

// TestFaultProxy checks each fault against an echo server.
func TestFaultProxy(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	p := startProxy(t, echo.Addr().String())
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// roundTrip sends msg and says how long its echo took, or that none
	// came within 2 s.
	roundTrip := func(msg string) (time.Duration, error) {
		start := time.Now()
		if _, err := c.Write([]byte(msg)); err != nil {
			return 0, err
		}
		_ = c.SetReadDeadline(start.Add(2 * time.Second))
		_, err := io.ReadFull(c, make([]byte, len(msg)))
		return time.Since(start), err
	}
	if _, err := roundTrip("plain"); err != nil {
		t.Fatalf("no echo through the proxy: %v", err)
	}
	p.SetLatency(50 * time.Millisecond)
	if d, err := roundTrip("slow"); err != nil || d < 100*time.Millisecond {
		t.Errorf("with 50 ms each way the echo took %v (%v), want at least 100 ms", d, err)
	}
	p.SetLatency(0)
	p.SetRate(1000)
	// The echo streams back as it arrives, so the two ways overlap: about
	// 200 ms in all, less the first slice's 20 ms.
	if d, err := roundTrip(strings.Repeat("x", 200)); err != nil || d < 150*time.Millisecond {
		t.Errorf("200 bytes at 1000 B/s took %v (%v), want at least 150 ms", d, err)
	}
	p.SetRate(0)
	p.BlackHole()
	held := make(chan error, 1)
	go func() { _, err := roundTrip("held"); held <- err }()
	select {
	case err := <-held:
		t.Fatalf("an echo came through the black hole (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	p.Heal()
	if err := <-held; err != nil {
		t.Errorf("what the black hole held did not flow on when it healed: %v", err)
	}
	if n := p.CutAll(); n != 1 {
		t.Errorf("CutAll cut %d connections, want 1", n)
	}
	if _, err := roundTrip("after the cut"); err == nil {
		t.Error("the connection still echoes after it was cut")
	}
}
