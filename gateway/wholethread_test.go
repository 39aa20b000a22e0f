package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/slowbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// weighedThreads is memory whose threads weigh what weights says (their
// tool names their length), and which sends none heavier than a read's
// max_weight, as memory does. staleOnce makes a thread's first basic view
// answer a weight of 1: it was written anew, heavier, once weighed.
type weighedThreads struct {
	fakeMemory
	weights   map[string]int64
	mu        sync.Mutex
	staleOnce map[string]bool
	past      int   // full reads asked within less than their thread weighs, and sent
	basics    int   // basic views asked
	refusal   error // memory's answer to every full read, when set
}

// refusedAsHeavier is memory's refusal of a read of a thread heavier than
// its max_weight.
func refusedAsHeavier(id string, weight, max int64) error {
	return origin.Error(codes.FailedPrecondition, fmt.Sprintf("thread %s weighs %d, more than the %d it was to "+
		"be read within: it was written since it was weighed; weigh it again", id, weight, max),
		origin.HeavierThanAsked, nil)
}

func (m *weighedThreads) weight(t *memoryv1.Thread) int64 {
	if w, ok := m.weights[t.GetThreadId()]; ok {
		return w
	}
	return int64(len(t.GetToolName()))
}

func (m *weighedThreads) GetThread(ctx context.Context, req *memoryv1.GetThreadRequest) (*memoryv1.GetThreadResponse,
	error) {
	got, err := m.fakeMemory.GetThread(ctx, req)
	if err != nil {
		return nil, err
	}
	got.Weight = m.weight(got.GetThread())
	m.mu.Lock()
	defer m.mu.Unlock()
	if req.GetView() == memoryv1.ThreadView_THREAD_VIEW_BASIC {
		m.basics++
		if m.staleOnce[req.GetThreadId()] {
			delete(m.staleOnce, req.GetThreadId())
			got.Weight = 1
		}
		return got, nil
	}
	if m.refusal != nil {
		return nil, m.refusal
	}
	if max := req.GetMaxWeight(); max > 0 && got.Weight > max {
		return nil, refusedAsHeavier(req.GetThreadId(), got.Weight, max)
	} else if max < got.Weight {
		m.past++
	}
	return got, nil
}

func (m *weighedThreads) ExportThreads(req *memoryv1.ExportThreadsRequest,
	stream grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse]) error {
	for _, t := range m.threads {
		if t.GetThreadId() != req.GetThreadId() {
			continue
		}
		if max := req.GetMaxWeight(); max < m.weight(t) {
			return refusedAsHeavier(t.GetThreadId(), m.weight(t), max)
		}
		return stream.Send(&memoryv1.ExportThreadsResponse{Thread: t})
	}
	return status.Error(codes.NotFound, "no such thread")
}

// The threads the gateway holds whole share one room, whoever they are
// for: each client may run eight requests at once, and clients are
// without number; eight slow readers of a thread at memory's bound, with
// one token, took zen serve past 1.2 GB. A read takes room for its
// thread's weight times what holding it costs (its JSON built whole by the
// generated route, a view, an export's line); one that finds no room
// waits, then is refused, saying when to try again; a basic view takes
// none; a read once the room is free runs.
func TestThreadsHeldWholeShareOneRoom(t *testing.T) {
	t.Parallel()
	const (
		heavy, other, light = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b",
			"00000000-0000-4000-8000-00000000000c"
		alice, bob = "alice-0123456789abcdef", "bob-0123456789abcdef0"
	)
	mem := &weighedThreads{weights: map[string]int64{heavy: 200 << 10, other: 200 << 10}}
	mem.threads = []*memoryv1.Thread{weighedThread(heavy, 1<<20), weighedThread(other, 4<<10),
		weighedThread(light, 1<<10)}
	bounds := servedBodies
	// Beside alice's, room for bob's thread once, not twice.
	bounds.threadRoom, bounds.roomWait = 512<<10, 300*time.Millisecond
	srv, _ := slowbody.NarrowServer(t, gatewayOverFor(t, mem, auth.Tokens{alice: "alice", bob: "bob"}, "", bounds))
	addr := srv.Listener.Addr().String()

	held := getHeldAs(t, addr, "/v1/threads/"+heavy, alice) // alice reads none of it
	began := time.Now()
	res, body := getWholeAs(t, addr, "/v1/threads/"+other+"/view", alice)
	if res.StatusCode != http.StatusTooManyRequests || time.Since(began) >= bounds.roomWait ||
		!strings.Contains(body, "your other reads") {
		t.Errorf("alice's read that does not fit beside hers, which holds room: %d %s after %s; want 429 at "+
			"once: waiting, it would keep every other client's reads behind it", res.StatusCode, body,
			time.Since(began))
	}
	for _, path := range []string{"/v1/threads/" + other, "/v1/threads/" + other + "?view=THREAD_VIEW_FULL",
		"/v1/threads/" + light, "/v1/threads/" + other + "?view=THREAD_VIEW_BASIC"} {
		if res, body := getWholeAs(t, addr, path, bob); res.StatusCode != http.StatusOK {
			t.Errorf("bob's GET %s beside alice's: %d %s; want it answered", path, res.StatusCode, body)
		}
	}
	for _, path := range []string{"/v1/threads/" + other + "?view=2&max_weight=1000000000",
		"/v1/threads/" + other + "/view",
		"/v1/threads:export?thread_id=" + other} {
		began := time.Now()
		res, body := getWholeAs(t, addr, path, bob)
		if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "holding threads") ||
			res.Header.Get("Retry-After") != "1" || time.Since(began) < bounds.roomWait {
			t.Errorf("bob's GET %s, which holds its thread twice or more, beside alice's: %d %s (Retry-After %q) "+
				"after %s; want 429 after %s", path, res.StatusCode, body, res.Header.Get("Retry-After"),
				time.Since(began), bounds.roomWait)
		}
	}
	held.Close()
	for deadline := time.Now().Add(20 * time.Second); ; {
		res, body := getWholeAs(t, addr, "/v1/threads/"+other+"/view", bob)
		if res.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob's view 20 s after alice left: %d %s; want it answered", res.StatusCode, body)
		}
	}
}

// A thread is read within the weight the gateway made room for: one
// written anew, heavier, after its basic view weighed it is weighed again
// (memory sends none past a read's max_weight), on every route that holds
// a thread whole. The generated route answered 400 for it; it still does
// for a thread heavier than the max_weight its client asked for.
func TestAThreadGrownSinceItWasWeighedIsWeighedAgain(t *testing.T) {
	t.Parallel()
	const id = "00000000-0000-4000-8000-00000000000a"
	mem := &weighedThreads{staleOnce: map[string]bool{}}
	mem.threads = []*memoryv1.Thread{weighedThread(id, 64<<10)}
	h := gatewayOverWith(t, mem, "", servedBodies)
	generated := "/v1/threads/" + id + "?view=2&max_weight=1000000000"
	for _, path := range []string{"/v1/threads/" + id, generated, "/v1/threads/" + id + "/view",
		"/v1/threads:export?thread_id=" + id, "/v1/threads:export", "/v1/threads:browse"} {
		mem.mu.Lock()
		mem.staleOnce[id] = true
		mem.mu.Unlock()
		if res := serveGET(t, h, path); res.Code != http.StatusOK {
			t.Errorf("GET %s of a thread grown since it was weighed: %d %s; want 200", path, res.Code,
				res.Body.String())
		}
	}
	// The client's own bound: refused at once, in the gateway's words
	// (memory's say to weigh it again), under either of its names.
	for _, asked := range []string{"max_weight=1000", "maxWeight=1000"} {
		mem.mu.Lock()
		basics := mem.basics
		mem.mu.Unlock()
		res := serveGET(t, h, "/v1/threads/"+id+"?view=2&"+asked)
		mem.mu.Lock()
		weighed := mem.basics - basics
		mem.mu.Unlock()
		if res.Code != http.StatusBadRequest || !strings.Contains(res.Body.String(), "the max_weight of 1000 asked") ||
			weighed != 1 {
			t.Errorf("GET ?%s of a thread heavier than that: %d %s, weighed %d times; want 400 after one, "+
				"saying the max_weight asked is too small", asked, res.Code, res.Body.String(), weighed)
		}
	}
	// Asked for what it weighs, grown past the weight first weighed: read
	// within what was asked once weighed again.
	mem.mu.Lock()
	mem.staleOnce[id] = true
	mem.mu.Unlock()
	if res := serveGET(t, h, "/v1/threads/"+id+"?view=2&max_weight=65536"); res.Code != http.StatusOK {
		t.Errorf("GET ?max_weight=65536 of a thread of 65536 first weighed at 1: %d %s; want 200", res.Code,
			res.Body.String())
	}
	// Memory's other refusals reach the client as they are, after one
	// weighing: taken for a thread grown, one came back 503, "kept changing".
	mem.mu.Lock()
	mem.refusal = status.Error(codes.FailedPrecondition, "some other precondition")
	basics := mem.basics
	mem.mu.Unlock()
	for _, path := range []string{"/v1/threads/" + id, generated} {
		res := serveGET(t, h, path)
		if res.Code != http.StatusBadRequest || !strings.Contains(res.Body.String(), "some other precondition") {
			t.Errorf("GET %s refused by memory for another reason: %d %s; want 400 with memory's words", path,
				res.Code, res.Body.String())
		}
	}
	mem.mu.Lock()
	if weighed := mem.basics - basics; weighed != 2 {
		t.Errorf("two reads refused for another reason were weighed %d times; want once each", weighed)
	}
	mem.refusal = nil
	mem.mu.Unlock()
	res := serveGET(t, h, "/v1/threads/"+id+"?view=2&max_weight=1&max_weight=1000000000")
	if res.Code != http.StatusBadRequest || !strings.Contains(res.Body.String(), "give it once") {
		t.Errorf("GET with max_weight twice: %d %s; want 400, saying to give it once", res.Code, res.Body.String())
	}
	if mem.past != 0 {
		t.Errorf("%d threads were read within less than they weigh", mem.past)
	}
}

// weighedThread is a thread whose tool name is size bytes.
func weighedThread(id string, size int) *memoryv1.Thread {
	return &memoryv1.Thread{ThreadId: id, ToolName: strings.Repeat("a", size)}
}

// serveGET answers a GET of path from h.
func serveGET(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil))
	return rec
}

// continuedMidExport is memory whose oldest thread is continued (moved to
// the front of the listing) while an export reads its first thread.
type continuedMidExport struct {
	fakeMemory
	oldest string
	once   sync.Once
}

func (m *continuedMidExport) ExportThreads(req *memoryv1.ExportThreadsRequest,
	stream grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse]) error {
	m.once.Do(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, t := range m.threads {
			if t.GetThreadId() == m.oldest {
				t.LastUpdatedAt = timestampNow()
			}
		}
	})
	return m.fakeMemory.ExportThreads(req, stream)
}

// An export holds every thread listed when it began, a thread continued
// while it ran too: one listed page by page as the export went, at its
// client's pace, was never written when it moved ahead of its page.
func TestAnExportHoldsAThreadContinuedMeanwhile(t *testing.T) {
	t.Parallel()
	mem := &continuedMidExport{}
	for i := range 2*exportPage + 1 {
		mem.threads = append(mem.threads, thread(fmt.Sprintf("t-%03d", i), "", "chat", i+1))
	}
	mem.oldest = "t-000"
	res := serveGET(t, gatewayOverWith(t, mem, "", servedBodies), "/v1/threads:export")
	lines := strings.Count(res.Body.String(), "\n")
	if res.Code != http.StatusOK || lines != len(mem.threads) || !strings.Contains(res.Body.String(), `"t-000"`) {
		t.Errorf("an export while its oldest thread was continued: %d, %d lines of %d threads (t-000 there: %v)",
			res.Code, lines, len(mem.threads), strings.Contains(res.Body.String(), `"t-000"`))
	}
}

func timestampNow() *timestamppb.Timestamp { return timestamppb.New(epoch.Add(24 * time.Hour)) }

// An export's next thread waits for room as long as its client does, even
// while the client's other reads hold room: refused at once and asked
// again, it asked memory 35,000 times a second.
func TestAnExportWaitsForRoomWithoutAsking(t *testing.T) {
	t.Parallel()
	const (
		heavy, other = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"
		light        = "00000000-0000-4000-8000-00000000000c"
		alice        = "alice-0123456789abcdef"
	)
	mem := &weighedThreads{weights: map[string]int64{heavy: 200 << 10, other: 400 << 10}}
	mem.threads = []*memoryv1.Thread{thread(heavy, "", "chat", 1), thread(light, "", "chat", 3),
		thread(other, "", "chat", 2)}
	mem.threads[0].ToolName = strings.Repeat("a", 1<<20)
	bounds := servedBodies
	bounds.threadRoom = 512 << 10
	srv, _ := slowbody.NarrowServer(t, gatewayOverFor(t, mem, auth.Tokens{alice: "alice"}, "", bounds))
	addr := srv.Listener.Addr().String()
	getHeldAs(t, addr, "/v1/threads/"+heavy, alice) // holds 200 KiB of the room, read by nobody
	mem.mu.Lock()
	before := mem.basics
	mem.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/threads:export", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Host = "localhost"
	r.Header.Set("Authorization", "Bearer "+alice)
	// light's line is written (and held in net/http's buffer); other's
	// waits for room until the deadline.
	if res, err := http.DefaultTransport.RoundTrip(r); err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	mem.mu.Lock()
	defer mem.mu.Unlock()
	if n := mem.basics - before; n > 10 {
		t.Errorf("an export waiting for room asked memory to weigh its thread %d times in a second", n)
	}
}

// circularMemory lists one page of threads for ever: its next page is
// always the one it gave.
type circularMemory struct{ fakeMemory }

func (*circularMemory) ListThreads(context.Context, *memoryv1.ListThreadsRequest) (*memoryv1.ListThreadsResponse,
	error) {
	return &memoryv1.ListThreadsResponse{Threads: []*memoryv1.ThreadSummary{{ThreadId: "0b7c7f2e-5d0c-4c1e-9a57-" +
		"2d4c0c1b2a11"}}, NextPageToken: "the-same-page"}, nil
}

// An export whose listing comes back to a page it gave ends with an
// error: a thread memory listed at a time its cursor could not pass (one
// imported as of 1500) had exports list for ever.
func TestAnExportWhoseListingGoesRoundEnds(t *testing.T) {
	t.Parallel()
	h := gatewayOver(t, &circularMemory{}, "")
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/v1/threads:export", nil))
		done <- rec
	}()
	select {
	case rec := <-done:
		if rec.Code < 500 || !strings.Contains(rec.Body.String(), "came back to a page") {
			t.Errorf("an export whose listing goes round: %d %s; want an error saying so", rec.Code, rec.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an export whose listing goes round does not end")
	}
}
