package provider

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestWriteTimeoutBoundsSendingTheRequest: a server that takes the
// connection but never reads the request fails the attempt once sending it
// takes longer than the write timeout.
func TestWriteTimeoutBoundsSendingTheRequest(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn // accepted, never read
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	hc := WithPhaseTimeouts(NewHTTPClient(5*time.Second), 0, 200*time.Millisecond)
	c := NewCompat("Custom API", "http://"+ln.Addr().String()+"/v1", "k", hc)
	// Twice what loopback's socket buffers hold (4 MiB sent, 128 KiB received), so the write blocks.
	big := strings.Repeat("x", 8<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = c.Generate(ctx, Request{Model: "a", Stream: true, Messages: []Message{{Role: "user", Content: big}}}, nil)
	var perr *Error
	if !errors.As(err, &perr) || !strings.Contains(perr.Msg, "sending the request took longer than 200ms") ||
		!perr.Retryable || perr.Fault != FaultTimeout {
		t.Fatalf("err = %#v", err)
	}
}

// TestPoolTimeoutBoundsTheWaitForAConnection: with the only connection a
// transport may open busy, a second request gives up after the pool
// timeout, while the first goes on.
func TestPoolTimeoutBoundsTheWaitForAConnection(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	started := make(chan struct{}, 1)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		started <- struct{}{}
		return fakemodel.Reply{Stall: true}
	})
	one := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	c := NewCompat("Custom API", fake.URL(), "k", WithPhaseTimeouts(one, 200*time.Millisecond, 0))
	first, stopFirst := context.WithCancel(context.Background())
	t.Cleanup(stopFirst) // before the fake closes, which waits for its requests
	firstDone := make(chan error, 1)
	go func() {
		_, err := c.Generate(first, Request{Model: "a", Stream: true,
			Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
		firstDone <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := c.Generate(ctx, Request{Model: "a", Stream: true, Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
	var perr *Error
	if !errors.As(err, &perr) || !strings.Contains(perr.Msg, "waiting for a connection took longer than 200ms") ||
		!perr.Retryable || perr.Fault != FaultTimeout {
		t.Fatalf("second call: err = %#v", err)
	}
	select {
	case err := <-firstDone:
		t.Fatalf("the first call ended with the second: %v", err)
	default:
	}
	stopFirst()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Errorf("first call: err = %v, want it cancelled by its caller", err)
	}
}
