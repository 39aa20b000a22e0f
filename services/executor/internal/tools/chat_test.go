package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/testing/protocmp"
)

// fakeRouter records Generate requests and answers with reply or err.
type fakeRouter struct {
	routerv1.UnimplementedRouterServiceServer
	got   []*routerv1.GenerateRequest
	reply string
	err   error
}

func (f *fakeRouter) Generate(req *routerv1.GenerateRequest, stream grpc.ServerStreamingServer[routerv1.GenerateResponse]) error {
	f.got = append(f.got, req)
	if f.err != nil {
		return f.err
	}
	_ = stream.Send(&routerv1.GenerateResponse{Event: &routerv1.GenerateResponse_Delta{Delta: f.reply}})
	return stream.Send(&routerv1.GenerateResponse{Event: &routerv1.GenerateResponse_Done{Done: &routerv1.GenerateDone{
		Content: f.reply, ModelName: "llama3.2", Provider: "custom", Usage: &routerv1.Usage{InputTokens: 10, OutputTokens: 2, TotalTokens: 12},
	}}})
}

// newEnv is an Env whose router is f, served in process and dialled with
// opts.
func newEnv(t *testing.T, f routerv1.RouterServiceServer, opts ...grpc.DialOption) *Env {
	srv := grpc.NewServer()
	routerv1.RegisterRouterServiceServer(srv, f)
	conn, stop, err := serve.NewInProcess().Serve(srv, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return &Env{Router: routerv1.NewRouterServiceClient(conn), Locale: "de-DE"}
}

func TestChatNewConversationLayout(t *testing.T) {
	f := &fakeRouter{reply: "an answer"}
	res, err := runChat(context.Background(), newEnv(t, f), &Call{
		Args:  map[string]any{"prompt": "why?", "temperature": 0.2},
		Model: &routerv1.Model{Name: "llama3.2"}, ModelRequested: "local-llama", RemainingTurns: 48,
		Files: []*executorv1.FileContent{{Path: "/p/a.go", Sha256: "aa", Content: "package a\n"}},
	})
	if err != nil || res.GetIsError() {
		t.Fatalf("runChat: %v %v", err, res)
	}
	req := f.got[0]
	user := req.GetMessages()[0].GetContent()
	for _, want := range []string{
		"=== USER REQUEST ===\nwhy?\n", "=== CONTEXT FILES ===\n--- BEGIN FILE: /p/a.go", "   1│ package a",
		"=== END REQUEST ===", "hold 48 more turns",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("user message lacks %q:\n%s", want, user)
		}
	}
	if !strings.HasPrefix(req.GetSystemPrompt(), "Always respond in de-DE.") || req.GetTemperature() != 0.2 {
		t.Errorf("system prompt %q..., temperature %v", req.GetSystemPrompt()[:30], req.GetTemperature())
	}
	p := decodeReply(t, res)
	if p.Status != "success" || p.Metadata.ModelUsed != "llama3.2" || p.Metadata.ProviderUsed != "custom" ||
		p.Metadata.RequestedModel != "local-llama" ||
		!strings.HasPrefix(p.Content, "an answer\n\n---\n\nAGENT'S TURN") {
		t.Errorf("reply = %+v", p)
	}
	turns := res.GetTurns()
	if len(turns) != 2 || turns[0].GetContent() != "why?" || turns[0].GetFiles()[0].GetSha256() != "aa" ||
		turns[1].GetContent() != "an answer" || turns[1].GetModelName() != "llama3.2" {
		t.Errorf("turns = %v", turns)
	}
	if ic := res.GetInitialContext().AsMap(); ic["prompt"] != "why?" || ic["temperature"] != nil {
		t.Errorf("initial context = %v, want the prompt without per-call settings", ic)
	}
}

func TestChatContinuationEmbedsHistoryOnceAndSkipsKnownFiles(t *testing.T) {
	f := &fakeRouter{reply: "again"}
	file := &executorv1.FileContent{Path: "/p/a.go", Sha256: "aa", Content: "package a\n"}
	_, err := runChat(context.Background(), newEnv(t, f), &Call{
		Args: map[string]any{"prompt": "and now?"}, Model: &routerv1.Model{Name: "llama3.2"}, RemainingTurns: 46,
		Files: []*executorv1.FileContent{file, {Path: "/p/b.go", Sha256: "bb", Content: "package b\n"}},
		Conversation: &executorv1.Conversation{ThreadId: "t", ToolName: "chat", TotalTurns: 2, MaxTurns: 50,
			Files: []*executorv1.FileContent{file},
			Turns: []*memoryv1.Turn{
				{Role: memoryv1.Role_ROLE_USER, Content: "why?", Files: []*memoryv1.FileRef{{Path: "/p/a.go"}}},
				{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "because", ModelName: "llama3.2"},
			}},
	})
	if err != nil {
		t.Fatal(err)
	}
	user := f.got[0].GetMessages()[0].GetContent()
	checks := map[string]int{
		"package a":                        1,
		"package b":                        1,
		"because":                          1,
		"=== NEW USER INPUT ===\nand now?": 1,
		"- /p/a.go":                        1,
		"hold 46 more turns":               1,
	}
	for s, want := range checks {
		if got := strings.Count(user, s); got != want {
			t.Errorf("%q appears %d times, want %d:\n%s", s, got, want, user)
		}
	}
}

// decodeReply reads a result's reply as the edge does.
func decodeReply(t *testing.T, res *executorv1.ToolResult) *reply.Reply {
	t.Helper()
	r, err := reply.Decode(res.GetReply())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A call's usage adds up its model calls; the last to answer names it.
func TestCallUsageAddsUpModelCalls(t *testing.T) {
	f := &fakeRouter{reply: "an answer"}
	env := newEnv(t, f)
	c := &Call{Model: &routerv1.Model{Name: "llama3.2"}}
	if c.Usage() != nil {
		t.Fatalf("usage before any model call: %v", c.Usage())
	}
	for range 2 {
		if _, err := generate(context.Background(), env, c, modelArgs{}, "system", "user", 0.5); err != nil {
			t.Fatal(err)
		}
	}
	want := &executorv1.ModelUsage{Model: "llama3.2", Provider: "custom", InputTokens: 20, OutputTokens: 4}
	if diff := cmp.Diff(want, c.Usage(), protocmp.Transform()); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}
