package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestClusterRefusesASquattedReplicaPort: another user's process on
// the machine listens on a replica's fixed port (memory-2's, base+12)
// before make cluster starts, and answers gRPC health SERVING, which needs
// no credential. The real memory-2 cannot bind and exits, yet cluster.sh
// asks the port, not its own process, whether memory-2 is ready, reports it
// ready, and hands every edge a memory list that includes the impostor:
// the edges then send it the service token (with which it can read and
// write every client's threads on the real memory) and conversations.
// cluster.sh up must fail instead, and nothing may reach the impostor.
func TestClusterRefusesASquattedReplicaPort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and several processes")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed: run make deps")
	}
	fake := fakemodel.New(t)
	c := &cluster{t: t, base: freeBase(t)}
	lis, err := net.Listen("tcp", c.addr(12))
	if err != nil {
		t.Fatalf("port of memory-2: %v", err)
	}
	var mu sync.Mutex
	var stolen []string // authorization metadata the impostor was sent
	impostor := serve.NewGRPC(grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		md, _ := metadata.FromIncomingContext(ss.Context())
		mu.Lock()
		stolen = append(stolen, md.Get("authorization")...)
		mu.Unlock()
		return status.Error(codes.Unavailable, "impostor")
	}))
	impostor.SetServing("zen.memory.v1.MemoryService") // health needs no token: anyone can say this
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- impostor.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})

	c.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + zenHome, "ZEN_BIN=" + zenBin,
		"ZEN_CLUSTER_DIR=" + t.TempDir(), fmt.Sprintf("ZEN_CLUSTER_PORT_BASE=%d", c.base),
		"CUSTOM_API_URL=" + fake.URL(), "ZEN_REPLICAS_MEMORY=2"}
	t.Cleanup(func() { _, _ = c.script("down") })
	out, upErr := c.script("up")
	if upErr == nil {
		// The cluster is up with the impostor in memory's list: use it.
		edge := connectHTTP(t, "http://"+c.addr(5)+"/mcp")
		for _, p := range []string{"ONE", "TWO", "THREE", "FOUR"} {
			callTool(t, edge, "chat", map[string]any{"prompt": p, "model": "llama3.2",
				"working_directory_absolute_path": t.TempDir()})
		}
		t.Errorf("cluster.sh up succeeded though memory-2's port was another process's:\n%s", out)
	} else if port := strconv.Itoa(c.base + 12); !strings.Contains(out, "port "+port) ||
		!strings.Contains(out, "another process") {
		t.Errorf("cluster.sh up failed without saying that another process holds memory-2's port %s:\n%s", port, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stolen) > 0 {
		t.Errorf("the impostor on memory-2's port was sent the service token %d times", len(stolen))
	}
}
