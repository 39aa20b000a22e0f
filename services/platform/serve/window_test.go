package serve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

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
	go p.accept()
	t.Cleanup(func() { lis.Close(); p.wg.Wait() })
	return p
}

func (p *pingCounter) accept() {
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
// on by default, makes each side that receives data send a PING and wait
// for its ack, two more frames and wake-ups on each call.
func TestCallsSendNoFlowControlPings(t *testing.T) {
	t.Parallel()
	g := NewGRPC()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("serve: %v", err)
		}
	})
	relay := newPingCounter(t, lis.Addr().String())
	conn, err := Dial(relay.lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
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
