package call

import (
	"context"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/reply"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// flakyMemory is a memory service whose calls first fail with the codes
// queued for their method, then succeed.
type flakyMemory struct {
	memoryv1.UnimplementedMemoryServiceServer

	mu       sync.Mutex
	fail     map[string][]codes.Code // method -> codes to answer, in order; the last repeats when always
	always   bool
	attempts map[string]int
	// full makes every append find the thread at its turn limit.
	full bool
}

// answer counts an attempt at method and returns the failure queued for it.
func (m *flakyMemory) answer(method string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts[method]++
	q := m.fail[method]
	if len(q) == 0 {
		return nil
	}
	code := q[0]
	if !m.always || len(q) > 1 {
		m.fail[method] = q[1:]
	}
	if code == codes.ResourceExhausted { // as memory answers a full store
		return origin.Error(code, "memory says its store is full", origin.StoreFull, nil)
	}
	return status.Error(code, "memory says "+code.String())
}

func (m *flakyMemory) CreateThread(_ context.Context, req *memoryv1.CreateThreadRequest) (
	*memoryv1.CreateThreadResponse, error) {
	if err := m.answer("CreateThread"); err != nil {
		return nil, err
	}
	return &memoryv1.CreateThreadResponse{Thread: &memoryv1.Thread{ThreadId: "new-thread", Turns: req.GetTurns()},
		RemainingTurns: 48}, nil
}

func (m *flakyMemory) AppendTurns(context.Context, *memoryv1.AppendTurnsRequest) (
	*memoryv1.AppendTurnsResponse, error) {
	if err := m.answer("AppendTurns"); err != nil {
		return nil, err
	}
	if m.full {
		return &memoryv1.AppendTurnsResponse{Accepted: false, TurnCount: 50, RemainingTurns: 0}, nil
	}
	return &memoryv1.AppendTurnsResponse{Accepted: true, TurnCount: 4, RemainingTurns: 46}, nil
}

func (m *flakyMemory) counts() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.attempts)
}

// dialMemory serves m over an in-memory listener and returns a client.
func dialMemory(t *testing.T, m *flakyMemory) memoryv1.MemoryServiceClient {
	t.Helper()
	return memoryClient(t, m)
}

// saved is what became of an answer: the thread it names, the reason it
// could not be saved, and how often memory was asked.
type saved struct {
	Thread   string
	Error    string
	Attempts map[string]int
}

func TestSaveRetriesUnavailable(t *testing.T) {
	t.Parallel()
	unavailable := []codes.Code{codes.Unavailable}
	lost := "this answer could not be saved, so the conversation cannot be continued"
	for _, tc := range []struct {
		name     string
		existing bool // whether the call continues a thread (AppendTurns) or starts one
		fail     map[string][]codes.Code
		always   bool
		deadline time.Duration // of the call, when set
		want     saved
	}{
		{
			name:     "append answered Unavailable once",
			existing: true,
			fail:     map[string][]codes.Code{"AppendTurns": unavailable},
			want:     saved{Thread: "old-thread", Attempts: map[string]int{"AppendTurns": 2}},
		},
		{
			name: "create answered Unavailable once",
			fail: map[string][]codes.Code{"CreateThread": unavailable},
			want: saved{Thread: "new-thread", Attempts: map[string]int{"CreateThread": 2}},
		},
		{
			name:     "a full store is not retried",
			existing: true,
			fail:     map[string][]codes.Code{"AppendTurns": {codes.ResourceExhausted}},
			want: saved{
				Error:    lost + ": zen's memory store is full, and stores nothing more until its operator makes room",
				Attempts: map[string]int{"AppendTurns": 1},
			},
		},
		{
			name: "a full store refusing a new thread is not retried",
			fail: map[string][]codes.Code{"CreateThread": {codes.ResourceExhausted}},
			want: saved{
				Error:    lost + ": zen's memory store is full, and stores nothing more until its operator makes room",
				Attempts: map[string]int{"CreateThread": 1},
			},
		},
		{
			name:     "a refusal is not retried",
			existing: true,
			fail:     map[string][]codes.Code{"AppendTurns": {codes.InvalidArgument}},
			want: saved{
				Error:    lost + ": memory says InvalidArgument",
				Attempts: map[string]int{"AppendTurns": 1},
			},
		},
		{
			// With time left, memory's own DeadlineExceeded is its answer.
			name:     "memory ran out of time after Unavailable",
			existing: true,
			fail:     map[string][]codes.Code{"AppendTurns": {codes.Unavailable, codes.DeadlineExceeded}},
			want: saved{
				Error:    lost + ": zen's memory did not answer in time",
				Attempts: map[string]int{"AppendTurns": 2},
			},
		},
		{
			name:     "memory did not answer in time",
			existing: true,
			fail:     map[string][]codes.Code{"AppendTurns": {codes.DeadlineExceeded}},
			want: saved{
				Error:    lost + ": zen's memory did not answer in time",
				Attempts: map[string]int{"AppendTurns": 1},
			},
		},
		{
			name:     "Unavailable until the call's deadline",
			existing: true,
			fail:     map[string][]codes.Code{"AppendTurns": unavailable},
			always:   true,
			deadline: 300 * time.Millisecond,
			want:     saved{Error: lost + ": zen's memory is unavailable right now"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mem := &flakyMemory{fail: tc.fail, always: tc.always, attempts: map[string]int{}}
			r := NewRunner(Backends{Memory: dialMemory(t, mem)}, nil, files.Policy{}, DefaultOutputTokens,
				slog.New(slog.DiscardHandler))
			ctx := t.Context()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			req := &executorv1.ExecuteToolRequest{}
			if tc.existing {
				req.Conversation = &executorv1.Conversation{ThreadId: "old-thread"}
			}
			out, err := r.finish(ctx, &Tool{Tool: &executorv1.Tool{Name: "chat"}}, req, chatResult(t), prepared{},
				&Summary{})
			if err != nil {
				t.Fatalf("finish: %v", err)
			}
			got := saved{Attempts: mem.counts(), Error: out.Reply.Metadata.ContinuationError}
			if offer := out.Reply.ContinuationOffer; offer != nil {
				got.Thread = offer.ContinuationID
			}
			if tc.always {
				got.Attempts = nil // as many as the deadline allows
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// chatResult is the executor's answer to a chat call: one exchange to store.
func chatResult(t *testing.T) *executorv1.ToolResult {
	t.Helper()
	return &executorv1.ToolResult{
		Reply:              (&reply.Reply{Status: reply.StatusSuccess, Content: "the answer"}).Encode(),
		OffersContinuation: true,
		Turns: []*memoryv1.Turn{
			{Role: memoryv1.Role_ROLE_USER, Content: "the question"},
			{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "the answer"},
		},
	}
}

// lateTimer is a call's context whose deadline the test moves into the
// past while Done stays open: a context whose timer has not run yet, as on
// a loaded machine, when gRPC already answers DeadlineExceeded by the clock.
type lateTimer struct {
	context.Context
	mu sync.Mutex
	at time.Time
}

func (c *lateTimer) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at, true
}

// lapse moves the deadline just past.
func (c *lateTimer) lapse() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = time.Now().Add(-time.Millisecond)
}

// TestSaveReportsUnavailableWhenTheClockRanOut: memory was unavailable, and
// by the next attempt the call's deadline had passed by the clock before
// its context ended: gRPC answers that attempt DeadlineExceeded itself.
// The reason to report is still that memory was unavailable. (Under load,
// this made TestSaveRetriesUnavailable's last case fail now and then.)
func TestSaveReportsUnavailableWhenTheClockRanOut(t *testing.T) {
	t.Parallel()
	// Sooner than saveWindow, so that the call's own deadline is the one
	// the attempts run under.
	ctx := &lateTimer{Context: t.Context(), at: time.Now().Add(saveWindow / 2)}
	mem := &flakyMemory{fail: map[string][]codes.Code{"AppendTurns": {codes.Unavailable}}, always: true,
		attempts: map[string]int{}}
	client := dialMemory(t, mem)
	r := NewRunner(Backends{Memory: client}, nil, files.Policy{}, DefaultOutputTokens, slog.New(slog.DiscardHandler))
	attempts := 0
	err := r.retryMemory(ctx, "AppendTurns", func(c context.Context, opts ...grpc.CallOption) error {
		if attempts++; attempts == 2 {
			ctx.lapse()
		}
		_, err := client.AppendTurns(c, &memoryv1.AppendTurnsRequest{}, opts...)
		return err
	})
	if diff := cmp.Diff(saveFailure(status.Error(codes.Unavailable, "")), saveFailure(err)); diff != "" {
		t.Errorf("after %d attempts, the reason (-want +got):\n%s", attempts, diff)
	}
}

// Only memory's word that its store is full reads as a full store: gRPC
// answers a message over its size limit with the same code.
func TestSaveFailureSaysAFullStoreOnlyWhenMemorySaysSo(t *testing.T) {
	t.Parallel()
	full := saveFailure(origin.Error(codes.ResourceExhausted, "memory: the store is full", origin.StoreFull, nil))
	if !strings.Contains(full, "store is full") {
		t.Errorf("memory's full store reads as %q", full)
	}
	tooLarge := saveFailure(status.Error(codes.ResourceExhausted, "grpc: trying to send message larger than max"))
	if strings.Contains(tooLarge, "full") {
		t.Errorf("a message over gRPC's limit reads as %q", tooLarge)
	}
}

// An exchange that finds its thread full is answered, and says it was not
// saved, and why: it looked like one that was. A thread at its turn limit
// (calls raced for its last turns) accepts none; one past what a thread may
// hold is refused in memory's words, once: a full thread stays full.
func TestAnExchangeAFullThreadRefusedSaysSo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		mem  *flakyMemory
		says string
	}{
		{"its turns", &flakyMemory{attempts: map[string]int{}, full: true}, "turn limit"},
		{"its weight", &flakyMemory{attempts: map[string]int{},
			fail: map[string][]codes.Code{"AppendTurns": {codes.FailedPrecondition}}}, "memory says FailedPrecondition"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := NewRunner(Backends{Memory: dialMemory(t, c.mem)}, nil, files.Policy{}, DefaultOutputTokens,
				slog.New(slog.DiscardHandler))
			req := &executorv1.ExecuteToolRequest{Conversation: &executorv1.Conversation{ThreadId: "old-thread"}}
			out, err := r.finish(t.Context(), &Tool{Tool: &executorv1.Tool{Name: "chat"}}, req, chatResult(t),
				prepared{}, &Summary{})
			if err != nil {
				t.Fatalf("finish: %v", err)
			}
			if got := out.Reply.Metadata.ContinuationError; !strings.Contains(got, c.says) {
				t.Errorf("continuation_error = %q, want it to say %q", got, c.says)
			}
			if out.Reply.ContinuationOffer != nil {
				t.Errorf("an offer to continue a full thread: %+v", out.Reply.ContinuationOffer)
			}
			if n := c.mem.attempts["AppendTurns"]; n != 1 {
				t.Errorf("AppendTurns tried %d times, want once", n)
			}
		})
	}
}
