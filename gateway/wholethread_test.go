package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/slowbody"
)

// weighedThreads is memory with threads whose tool names weigh what
// memory says they do.
type weighedThreads struct{ fakeMemory }

func (m *weighedThreads) GetThread(ctx context.Context, req *memoryv1.GetThreadRequest) (*memoryv1.GetThreadResponse,
	error) {
	got, err := m.fakeMemory.GetThread(ctx, req)
	if err == nil {
		got.Weight = int64(len(got.GetThread().GetToolName()))
	}
	return got, err
}

// weighedThread is a thread of weight bytes.
func weighedThread(id string, weight int) *memoryv1.Thread {
	return &memoryv1.Thread{ThreadId: id, ToolName: strings.Repeat("a", weight)}
}

// The threads the gateway holds whole share one room, whoever they are
// for: each client may run eight requests at once, and clients are
// without number; eight slow readers of a thread at memory's bound, with
// one token, took zen serve past 1.2 GB. A read that finds no room waits
// for it, then is refused, saying when to try again; a basic view, which
// holds no turns, takes none; a read once the room is free runs.
func TestThreadsHeldWholeShareOneRoom(t *testing.T) {
	t.Parallel()
	const (
		heavy, other, light = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b",
			"00000000-0000-4000-8000-00000000000c"
		alice, bob = "alice-0123456789abcdef", "bob-0123456789abcdef0"
	)
	mem := &weighedThreads{}
	mem.threads = []*memoryv1.Thread{weighedThread(heavy, 1<<20), weighedThread(other, 1<<20),
		weighedThread(light, 1<<10)}
	bounds := servedBodies
	bounds.threadRoom, bounds.roomWait = 3<<19, 300*time.Millisecond
	srv, _ := slowbody.NarrowServer(t, gatewayOverFor(t, mem, auth.Tokens{alice: "alice", bob: "bob"}, "", bounds))
	addr := srv.Listener.Addr().String()

	held := getHeldAs(t, addr, "/v1/threads/"+heavy, alice) // alice reads none of it
	for _, path := range []string{"/v1/threads/" + other, "/v1/threads/" + other + "?view=THREAD_VIEW_FULL",
		"/v1/threads/" + other + "?view=2&view=2", "/v1/threads/" + other + "/view",
		"/v1/threads:export?thread_id=" + other} {
		began := time.Now()
		res, body := getWholeAs(t, addr, path, bob)
		if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "holding threads") ||
			res.Header.Get("Retry-After") != "1" || time.Since(began) < bounds.roomWait {
			t.Errorf("bob's GET %s while alice held a thread that fills the room: %d %s (Retry-After %q) "+
				"after %s; want 429 after %s", path, res.StatusCode, body, res.Header.Get("Retry-After"),
				time.Since(began), bounds.roomWait)
		}
	}
	for _, path := range []string{"/v1/threads/" + light, "/v1/threads/" + other + "?view=THREAD_VIEW_BASIC"} {
		if res, body := getWholeAs(t, addr, path, bob); res.StatusCode != http.StatusOK {
			t.Errorf("bob's GET %s while alice held a heavy thread: %d %s; want it answered", path,
				res.StatusCode, body)
		}
	}
	held.Close()
	for deadline := time.Now().Add(20 * time.Second); ; {
		res, body := getWholeAs(t, addr, "/v1/threads/"+other, bob)
		if res.StatusCode == http.StatusOK && len(body) > 1<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's read 20 s after alice left: %d, %d bytes; want the thread", res.StatusCode, len(body))
		}
	}
}
