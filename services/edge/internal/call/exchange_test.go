package call

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/google/uuid"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// fakeMemory records the appends it gets.
type fakeMemory struct {
	memoryv1.UnimplementedMemoryServiceServer
	mu      sync.Mutex
	appends []*memoryv1.AppendTurnsRequest
}

func (f *fakeMemory) AppendTurns(_ context.Context, req *memoryv1.AppendTurnsRequest) (*memoryv1.AppendTurnsResponse,
	error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appends = append(f.appends, req)
	return &memoryv1.AppendTurnsResponse{Accepted: true, TurnCount: int32(2 * len(f.appends))}, nil
}

func memoryClient(t *testing.T, srv memoryv1.MemoryServiceServer) memoryv1.MemoryServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	g := grpc.NewServer()
	memoryv1.RegisterMemoryServiceServer(g, srv)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("passthrough:///memory", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return memoryv1.NewMemoryServiceClient(conn)
}

// TestEachSaveNamesItsExchange: every exchange the edge appends carries an
// exchange id of its own, which memory uses to store a retried save once,
// and the turn count the call was prepared with, from which memory looks.
func TestEachSaveNamesItsExchange(t *testing.T) {
	t.Parallel()
	fake := &fakeMemory{}
	r := NewRunner(Backends{Memory: memoryClient(t, fake)}, nil, files.NewPolicy(files.Config{}), DefaultOutputTokens, nil)
	thread := uuid.NewString()
	req := &executorv1.ExecuteToolRequest{ToolName: "chat", Conversation: &executorv1.Conversation{ThreadId: thread}}
	res := &executorv1.ToolResult{Turns: []*memoryv1.Turn{
		{Role: memoryv1.Role_ROLE_USER, Content: "q"},
		{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "a"},
	}}
	for range 2 {
		if _, stored, _, err := r.store(context.Background(), nil, req, res, 7); err != nil || !stored {
			t.Fatalf("store: %v, stored %v", err, stored)
		}
	}
	seen := map[string]bool{}
	for _, a := range fake.appends {
		id := a.GetExchangeId()
		if uuid.Validate(id) != nil || seen[id] {
			t.Errorf("exchange id %q: want a fresh UUID for each exchange", id)
		}
		seen[id] = true
		// Where memory looks for an earlier attempt: the thread as the
		// call was prepared.
		if n := a.GetTurnCountSeen(); n != 7 {
			t.Errorf("turn_count_seen = %d, want the prepared count, 7", n)
		}
	}
}
