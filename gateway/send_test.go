package gateway

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/slowbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// bigThread is memory with one thread whose tool name is size bytes, and
// an export of it.
type bigThread struct {
	fakeMemory
	thread *memoryv1.Thread
}

// bigThreadPath is the generated route that reads a bigThread's thread.
const bigThreadPath = "/v1/threads/" + bigThreadID

const bigThreadID = "00000000-0000-4000-8000-000000000001"

func newBigThread(size int) *bigThread {
	b := &bigThread{thread: &memoryv1.Thread{ThreadId: bigThreadID, ToolName: strings.Repeat("a", size)}}
	b.threads = []*memoryv1.Thread{b.thread} // listed, as memory lists it
	return b
}

func (b *bigThread) GetThread(context.Context, *memoryv1.GetThreadRequest) (*memoryv1.GetThreadResponse, error) {
	return &memoryv1.GetThreadResponse{Thread: b.thread}, nil
}

func (b *bigThread) ExportThreads(req *memoryv1.ExportThreadsRequest,
	stream grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse]) error {
	if id := req.GetThreadId(); id != "" && id != bigThreadID {
		return status.Errorf(codes.NotFound, "thread %s was not found or has expired", id)
	}
	return stream.Send(&memoryv1.ExportThreadsResponse{Thread: b.thread})
}

// TestAnAnswerNobodyReadsEnds: an answer whose client stops reading ends
// once a piece of it has waited sendTime to go out, and what it held with
// it; a thread of 8 MB asked for by 48 requests that read nothing held
// 1.2 GB for as long as their connections lived.
func TestAnAnswerNobodyReadsEnds(t *testing.T) {
	t.Parallel()
	bounds := servedBodies
	bounds.sendTime = 300 * time.Millisecond
	srv, closed := slowbody.NarrowServer(t, gatewayOverWith(t, newBigThread(1<<20), "", bounds))
	conn := dialGateway(t, srv)
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprint(conn, "GET "+bigThreadPath+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
	_, _ = conn.Read(make([]byte, 1)) // the answer has begun; no more is read
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("an answer nobody reads was still held after 20 s")
	}
}

// TestASlowReaderGetsTheWholeExport: a client that reads steadily, if
// slowly, gets the whole of an export whose line takes longer than
// sendTime to go out: the bound is on how long a piece waits, not a line.
// A client reading at 80 KB/s lost the tail of an 8 MB thread, after its
// 200 had gone out.
func TestASlowReaderGetsTheWholeExport(t *testing.T) {
	t.Parallel()
	const size = 4 << 20
	bounds := servedBodies
	bounds.sendTime = time.Second
	srv, _ := slowbody.NarrowServer(t, gatewayOverWith(t, newBigThread(size), "", bounds))
	conn := dialGateway(t, srv)
	_ = conn.(*net.TCPConn).SetReadBuffer(64 << 10) // not the megabytes the kernel would grow it to
	fmt.Fprint(conn, "GET /v1/threads:export HTTP/1.1\r\nHost: localhost\r\n\r\n")
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	res, err := http.ReadResponse(bufio.NewReaderSize(paced{conn, tick}, 64<<10), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil || len(body) < size {
		t.Errorf("read %d bytes of an export of %d (%v): it was cut", len(body), size, err)
	}
}

// paced reads 32 KiB a tick of 10 ms at most: 3.2 MB/s, 1.3 s for the
// export above, each 64 KiB piece in a twentieth of its time.
type paced struct {
	r    io.Reader
	tick *time.Ticker
}

func (p paced) Read(b []byte) (int, error) {
	<-p.tick.C
	return p.r.Read(b[:min(len(b), 32<<10)])
}
