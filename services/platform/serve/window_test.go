package serve

import (
	"bufio"
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// pingCounter relays one gRPC connection and counts the PING frames each
// side starts (acks are not counted).
type pingCounter struct {
	lis    net.Listener
	target string
	pings  atomic.Int64
	wg     sync.WaitGroup
}

func newPingCounter(t *testing.T, target string) *pingCounter {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pingCounter{lis: lis, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() { lis.Close(); p.wg.Wait() })
	return p
}

func (p *pingCounter) accept() {
	defer p.wg.Done()
	for {
		client, err := p.lis.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.wg.Add(2)
		go p.relay(server, client, true)
		go p.relay(client, server, false)
	}
}

// relay copies from src to dst frame by frame, after the client's preface
// when fromClient.
func (p *pingCounter) relay(dst, src net.Conn, fromClient bool) {
	defer p.wg.Done()
	defer dst.Close()
	r := bufio.NewReader(src)
	if fromClient {
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(r, preface); err != nil {
			return
		}
		if _, err := dst.Write(preface); err != nil {
			return
		}
	}
	for {
		head, err := r.Peek(9)
		if err != nil {
			return
		}
		length := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
		frame := make([]byte, 9+length)
		if _, err := io.ReadFull(r, frame); err != nil {
			return
		}
		if http2.FrameType(frame[3]) == http2.FramePing && http2.Flags(frame[4])&http2.FlagPingAck == 0 {
			p.pings.Add(1)
		}
		if _, err := dst.Write(frame); err != nil {
			return
		}
	}
}

// A call costs its own frames and no more: gRPC's bandwidth estimator,
// on by default, has each side that receives data send a WINDOW_UPDATE and
// a PING, which the peer acks, on every call.
func TestCallsSendNoFlowControlPings(t *testing.T) {
	t.Parallel()
	relay := newPingCounter(t, serveOnLoopback(t, NewGRPC()))
	conn, err := Dial(relay.lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	health := healthpb.NewHealthClient(conn)
	const calls = 20
	for range calls {
		if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := relay.pings.Load(); n != 0 {
		t.Errorf("%d calls started %d PING frames, want none", calls, n)
	}
}

// serveOnLoopback serves g on a free loopback port until the test ends,
// and returns its address.
func serveOnLoopback(t *testing.T, g *GRPC) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, lis) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return lis.Addr().String()
}
