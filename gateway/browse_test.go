package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/hostguard"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/turnmeta"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// fakeMemory lists and returns the threads it holds, as the memory
// service does: newest first (ties by id, descending), in pages whose
// token is a cursor naming the last thread of the page before.
type fakeMemory struct {
	memoryv1.UnimplementedMemoryServiceServer
	mu      sync.Mutex
	threads []*memoryv1.Thread
	lists   int // ListThreads calls
	// fullReads counts the GetThread calls that asked for the turns.
	fullReads int
}

func (f *fakeMemory) ListThreads(_ context.Context,
	req *memoryv1.ListThreadsRequest) (*memoryv1.ListThreadsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	after, err := parseFakeCursor(req.GetPageToken())
	if err != nil {
		return nil, err
	}
	var match []*memoryv1.Thread
	for _, t := range f.threads {
		if (req.GetToolName() == "" || t.GetToolName() == req.GetToolName()) && after(t) {
			match = append(match, t)
		}
	}
	slices.SortStableFunc(match, func(a, b *memoryv1.Thread) int {
		if c := b.GetLastUpdatedAt().AsTime().Compare(a.GetLastUpdatedAt().AsTime()); c != 0 {
			return c
		}
		return strings.Compare(b.GetThreadId(), a.GetThreadId())
	})
	size := int(req.GetPageSize())
	resp := &memoryv1.ListThreadsResponse{}
	for _, t := range match[:min(size, len(match))] {
		first := ""
		if len(t.GetTurns()) > 0 {
			first = t.GetTurns()[0].GetContent()
		}
		resp.Threads = append(resp.Threads, &memoryv1.ThreadSummary{ThreadId: t.GetThreadId(),
			ParentThreadId: t.GetParentThreadId(), ToolName: t.GetToolName(), CreatedAt: t.GetCreatedAt(),
			LastUpdatedAt: t.GetLastUpdatedAt(), ExpiresAt: t.GetExpiresAt(), TurnCount: int32(len(t.GetTurns())),
			FirstPrompt: first})
	}
	if size < len(match) {
		last := match[size-1]
		resp.NextPageToken = fmt.Sprintf("%d/%s", last.GetLastUpdatedAt().AsTime().UnixNano(), last.GetThreadId())
	}
	return resp, nil
}

// parseFakeCursor reads a page token: whether a thread comes after it.
func parseFakeCursor(token string) (func(*memoryv1.Thread) bool, error) {
	if token == "" {
		return func(*memoryv1.Thread) bool { return true }, nil
	}
	nanos, id, ok := strings.Cut(token, "/")
	n, err := strconv.ParseInt(nanos, 10, 64)
	if !ok || err != nil {
		return nil, status.Error(codes.InvalidArgument, "page_token is not one this server returned; start again without it")
	}
	at := time.Unix(0, n)
	return func(t *memoryv1.Thread) bool {
		u := t.GetLastUpdatedAt().AsTime()
		return u.Before(at) || u.Equal(at) && t.GetThreadId() < id
	}, nil
}

// remove deletes a thread, as DeleteThread would.
func (f *fakeMemory) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.threads = slices.DeleteFunc(f.threads, func(t *memoryv1.Thread) bool { return t.GetThreadId() == id })
}

func (f *fakeMemory) GetThread(_ context.Context, req *memoryv1.GetThreadRequest) (*memoryv1.GetThreadResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.threads {
		if t.GetThreadId() != req.GetThreadId() {
			continue
		}
		n := int32(len(t.GetTurns()))
		if req.GetView() == memoryv1.ThreadView_THREAD_VIEW_BASIC {
			head := proto.CloneOf(t)
			head.Turns = nil
			return &memoryv1.GetThreadResponse{Thread: head, TurnCount: n}, nil
		}
		f.fullReads++
		return &memoryv1.GetThreadResponse{Thread: t, LastModel: "model-b", TurnCount: n}, nil
	}
	return nil, status.Errorf(codes.NotFound, "thread %s was not found or has expired", req.GetThreadId())
}

// browseGateway is the gateway in front of memory, with trace as
// ZEN_TRACE_URL.
func browseGateway(t *testing.T, memory *fakeMemory, trace string) http.Handler {
	t.Helper()
	return gatewayOver(t, memory, trace)
}

// gatewayOver is the gateway in front of memory, any fake of the service.
func gatewayOver(t *testing.T, memory memoryv1.MemoryServiceServer, trace string) http.Handler {
	t.Helper()
	return gatewayOverWith(t, memory, trace, servedBodies)
}

// gatewayOverWith is gatewayOver with request bodies held to bodies.
func gatewayOverWith(t *testing.T, memory memoryv1.MemoryServiceServer, trace string, bodies bodyBounds) http.Handler {
	t.Helper()
	return gatewayOverFor(t, memory, nil, trace, bodies)
}

// gatewayOverBench is gatewayOver for a benchmark.
func gatewayOverBench(b *testing.B, memory memoryv1.MemoryServiceServer) http.Handler {
	b.Helper()
	return gatewayOverFor(b, memory, nil, "", servedBodies)
}

// gatewayOverFor is gatewayOverWith requiring tokens.
func gatewayOverFor(t testing.TB, memory memoryv1.MemoryServiceServer, tokens auth.Tokens, trace string,
	bodies bodyBounds) http.Handler {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	// As the roles are: a thread may be larger than gRPC's default 4 MiB.
	srv := grpc.NewServer(grpc.MaxSendMsgSize(serve.MaxMessageBytes))
	memoryv1.RegisterMemoryServiceServer(srv, memory)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///memory", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(serve.MaxMessageBytes)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	tu, err := ParseTraceURL(trace)
	if err != nil {
		t.Fatal(err)
	}
	hosts, _ := hostguard.Load(func(string) string { return "" })
	h, err := newGateway(t.Context(), Conns{Memory: conn, Router: conn, Executor: conn}, Settings{Tokens: tokens,
		Hosts: hosts, Version: testVersion, Trace: tu}, bodies)
	if err != nil {
		t.Fatal(err)
	}
	return serve.BodyDeadline(bodies.time, h) // as serve.HTTP serves it
}

func getInto(t *testing.T, h http.Handler, path string, v any) int {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost"+path, nil))
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, rec.Body)
		}
	} else if m, ok := v.(*map[string]any); ok {
		_ = json.Unmarshal(rec.Body.Bytes(), m)
	}
	return rec.Code
}

var epoch = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func thread(id, parent, tool string, updated int, turns ...*memoryv1.Turn) *memoryv1.Thread {
	at := timestamppb.New(epoch.Add(time.Duration(updated) * time.Minute))
	return &memoryv1.Thread{ThreadId: id, ParentThreadId: parent, ToolName: tool, CreatedAt: at, LastUpdatedAt: at,
		ExpiresAt: timestamppb.New(at.AsTime().Add(3 * time.Hour)), Turns: turns}
}

func meta(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBrowsePagesThroughASearch: a search that matches few threads goes
// on through memory's pages, and its pages, followed to the end, give
// each match once, newest first, each with its models, tokens and cost.
func TestBrowsePagesThroughASearch(t *testing.T) {
	t.Parallel()
	mem := &fakeMemory{}
	var want []string
	for i := 250; i > 0; i-- { // newest first
		prompt := fmt.Sprintf("question %d", i)
		if i%7 == 0 {
			prompt = fmt.Sprintf("a NEEDLE in question %d", i)
			want = append(want, fmt.Sprintf("t%03d", i))
		}
		answer := &memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, ModelName: "model-a",
			ModelMetadata: meta(t, map[string]any{"usage": map[string]any{"input_tokens": 100, "output_tokens": 20,
				"cost_usd": 0.5}})}
		mem.threads = append(mem.threads, thread(fmt.Sprintf("t%03d", i), "", "chat", i,
			&memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: prompt}, answer, answer))
	}
	h := browseGateway(t, mem, "")
	var got []string
	token, pages := "", 0
	for {
		var page browsePage
		if code := getInto(t, h, "/v1/threads:browse?page_size=5&query=needle&page_token="+token, &page); code != 200 {
			t.Fatalf("page %d: %d", pages, code)
		}
		for _, r := range page.Threads {
			got = append(got, r.ThreadID)
			wantRow := tokenUse{InputTokens: 200, OutputTokens: 40, CostUSD: 1}
			if r.tokenUse != wantRow || !slices.Equal(r.Models, []string{"model-a"}) || r.TurnCount != 3 {
				t.Errorf("row %s: %+v, models %v, %d turns", r.ThreadID, r.tokenUse, r.Models, r.TurnCount)
			}
		}
		pages++
		if token = page.NextPageToken; token == "" || pages > 20 {
			break
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("threads matching needle (-want +got):\n%s", diff)
	}
	if pages != 8 { // 35 matches, 5 a page
		t.Errorf("%d pages, want 8", pages)
	}
	var bad map[string]any
	if code := getInto(t, h, "/v1/threads:browse?page_token=nonsense", &bad); code != http.StatusBadRequest ||
		!strings.Contains(fmt.Sprint(bad["message"]), "start again without it") {
		t.Errorf("a token of nothing: %d %v", code, bad)
	}
}

// TestThreadViewShowsWhatTheTurnsHold: the view's turns carry their usage
// and trace links (only for real trace ids), the files say when their
// contents changed, workflow steps come from the turns, and the parent
// and branches are found.
func TestThreadViewShowsWhatTheTurnsHold(t *testing.T) {
	t.Parallel()
	const trace = "0af7651916cd43dd8448eb211c80319c"
	file := func(path, sum string) *memoryv1.FileRef {
		return &memoryv1.FileRef{Path: path, Sha256: sum, SizeBytes: int32(len(sum))}
	}
	turns := []*memoryv1.Turn{
		{Role: memoryv1.Role_ROLE_USER, Content: "step one", Files: []*memoryv1.FileRef{file("/a.go", "aaa")},
			ModelMetadata: meta(t, map[string]any{"trace_id": trace, "step": map[string]any{"step_number": 1,
				"total_steps": 2, "next_step_required": true, "status": "pause_for_investigation",
				"confidence": "low", "findings": "a clue"}})},
		{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "answer", ModelName: "model-b", ModelProvider: "custom",
			ModelMetadata: meta(t, map[string]any{"trace_id": trace, "usage": map[string]any{"input_tokens": 1200,
				"output_tokens": 34, "cost_usd": 0.002}})},
		{Role: memoryv1.Role_ROLE_USER, Content: "again",
			Files:         []*memoryv1.FileRef{file("/a.go", "bbbb"), file("/b.go", "ccc")},
			ModelMetadata: meta(t, map[string]any{"trace_id": "javascript:alert(1)"})},
	}
	mem := &fakeMemory{threads: []*memoryv1.Thread{
		thread("child", "main", "debug", 4),
		thread("main", "root", "debug", 3, turns...),
		thread("other", "", "chat", 2),
		thread("root", "", "debug", 1, &memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: "the start"}),
	}}
	h := browseGateway(t, mem, "https://jaeger.example/trace/{trace_id}?uiEmbed=v0")
	var v threadView
	if code := getInto(t, h, "/v1/threads/main/view", &v); code != 200 {
		t.Fatalf("GET view: %d", code)
	}
	type turnSummary struct {
		Role, TraceURL string
		In, Out        int64
		Files          []turnFile
	}
	var gotTurns []turnSummary
	for _, tv := range v.Turns {
		gotTurns = append(gotTurns, turnSummary{tv.Role, tv.TraceURL, tv.InputTokens, tv.OutputTokens, tv.Files})
	}
	link := "https://jaeger.example/trace/" + trace + "?uiEmbed=v0"
	wantTurns := []turnSummary{
		{"user", link, 0, 0, []turnFile{{Path: "/a.go", SHA256: "aaa", SizeBytes: 3}}},
		{"assistant", link, 1200, 34, []turnFile{}},
		{"user", "", 0, 0, []turnFile{{Path: "/a.go", SHA256: "bbbb", SizeBytes: 4, Changed: true},
			{Path: "/b.go", SHA256: "ccc", SizeBytes: 3}}},
	}
	if diff := cmp.Diff(wantTurns, gotTurns); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	wantFiles := []fileView{
		{Path: "/a.go", SHA256: "bbbb", SizeBytes: 4, Turns: []int32{1, 3}, ChangedAt: []int32{3}},
		{Path: "/b.go", SHA256: "ccc", SizeBytes: 3, Turns: []int32{3}, ChangedAt: []int32{}},
	}
	wantSteps := []stepView{{Turn: 1, Step: turnmeta.Step{StepNumber: 1, TotalSteps: 2, NextStepRequired: true,
		Status: "pause_for_investigation", Confidence: "low", Findings: "a clue"}}}
	if diff := cmp.Diff(wantFiles, v.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSteps, v.Steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	related := []string{v.Parent.ThreadID, v.Parent.FirstPrompt}
	for _, b := range v.Branches {
		related = append(related, b.ThreadID)
	}
	if diff := cmp.Diff([]string{"root", "the start", "child"}, related); diff != "" || !v.BranchesComplete {
		t.Errorf("parent and branches (-want +got):\n%s", diff)
	}
	if v.Thread.CostUSD != 0.002 || v.LastModel != "model-b" || v.Thread.FirstPrompt != "step one" {
		t.Errorf("thread row %+v, last model %q", v.Thread, v.LastModel)
	}

	var gone threadView
	if code := getInto(t, h, "/v1/threads/child/view", &gone); code != 200 || gone.Parent == nil ||
		gone.Parent.Missing {
		t.Errorf("child's parent: %d %+v", code, gone.Parent)
	}
	var missing map[string]any
	if code := getInto(t, h, "/v1/threads/nope/view", &missing); code != http.StatusNotFound {
		t.Errorf("an unknown thread's view: %d %v", code, missing)
	}
}

func TestParseTraceURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want, err string }{
		{"", "", ""},
		{"http://localhost:16686/trace/{trace_id}", "http://localhost:16686/trace/0af7651916cd43dd8448eb211c80319c", ""},
		{"https://grafana.example/explore?left={\"queries\":[{\"query\":\"{trace_id}\"}]}",
			"https://grafana.example/explore?left={\"queries\":[{\"query\":\"0af7651916cd43dd8448eb211c80319c\"}]}", ""},
		{"http://localhost:16686/trace/", "", "has no {trace_id}"},
		{"javascript:alert('{trace_id}')", "", "is not http or https"},
		{"ftp://traces/{trace_id}", "", "is not http or https"},
		{"http:///{trace_id}", "", "names no host"},
		{"http://bad host/{trace_id}", "", "is not a URL"},
	} {
		u, err := ParseTraceURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "ZEN_TRACE_URL") {
				t.Errorf("ParseTraceURL(%q) = %v, want an error naming ZEN_TRACE_URL that %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseTraceURL(%q): %v", tc.in, err)
			continue
		}
		if got := u.For("0af7651916cd43dd8448eb211c80319c"); got != tc.want {
			t.Errorf("ParseTraceURL(%q).For = %q, want %q", tc.in, got, tc.want)
		}
		if got := u.For("not-a-trace-id"); got != "" {
			t.Errorf("ParseTraceURL(%q) links %q for a bad id", tc.in, got)
		}
	}
}
