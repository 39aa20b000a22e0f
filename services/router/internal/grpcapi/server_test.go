package grpcapi_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/catalogue"
	"github.com/zenmcp/zen/services/router/internal/dispatch"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fastPolicy retries like the default, without the waits.
var fastPolicy = dispatch.Policy{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
	Deadline: 20 * time.Second, IdleTimeout: 5 * time.Second, CooldownAfter: 3, Cooldown: time.Minute}

// newRouter serves a router whose Custom provider is the fake, over gRPC.
func newRouter(t *testing.T, fake *fakemodel.Server, defaultModel string) routerv1.RouterServiceClient {
	t.Helper()
	custom, err := catalogue.Embedded("custom")
	if err != nil {
		t.Fatal(err)
	}
	return newRouterWith(t, fake, defaultModel, custom)
}

// newRouterWith is newRouter with the Custom provider's catalogue given.
func newRouterWith(t *testing.T, fake *fakemodel.Server, defaultModel string, custom []catalogue.Model) routerv1.RouterServiceClient {
	t.Helper()
	openai, _ := catalogue.Embedded("openai")
	reg, err := routing.New([]*routing.Provider{
		{Name: "openai", Models: openai},
		{Name: "custom", Configured: true, Models: custom, Client: provider.NewCompat("Custom API", fake.URL(), "k", provider.NewHTTPClient(5e9))},
	}, defaultModel)
	if err != nil {
		t.Fatal(err)
	}
	api := grpcapi.New(reg, fastPolicy, slog.New(slog.DiscardHandler), telemetry.NewInstruments())
	api.SetDeltaEvery(0) // every chunk a delta: these tests read the stream as it comes
	return serveRouter(t, api)
}

// onlyProvider is a registry whose one provider, name (as label names it),
// is the fake, over the OpenAI-compatible API.
func onlyProvider(tb testing.TB, name, label string, fake *fakemodel.Server) *routing.Registry {
	tb.Helper()
	models, err := catalogue.Embedded(name)
	if err != nil {
		tb.Fatal(err)
	}
	reg, err := routing.New([]*routing.Provider{{Name: name, Label: label, Configured: true, Models: models,
		Client: provider.NewCompat(label, fake.URL(), "k", provider.NewHTTPClient(5*time.Second))}}, "auto")
	if err != nil {
		tb.Fatal(err)
	}
	return reg
}

// serveRouter serves api on an in-process gRPC server built with opts and
// returns a client of it; both stop when the test ends.
func serveRouter(t *testing.T, api *grpcapi.Server, opts ...grpc.ServerOption) routerv1.RouterServiceClient {
	t.Helper()
	srv := grpc.NewServer(opts...)
	routerv1.RegisterRouterServiceServer(srv, api)
	conn, stop, err := serve.NewInProcess().Serve(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return routerv1.NewRouterServiceClient(conn)
}

func generate(ctx context.Context, c routerv1.RouterServiceClient, req *routerv1.GenerateRequest) (string, *routerv1.GenerateDone, error) {
	stream, err := c.Generate(ctx, req)
	if err != nil {
		return "", nil, err
	}
	var deltas strings.Builder
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return deltas.String(), nil, io.ErrUnexpectedEOF
		}
		if err != nil {
			return deltas.String(), nil, err
		}
		if d := msg.GetDone(); d != nil {
			return deltas.String(), d, nil
		}
		deltas.WriteString(msg.GetDelta())
	}
}

func TestGenerateStreamsAndReportsUsage(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "three little words", PromptTokens: 7, CompletionTokens: 3}
	})
	c := newRouter(t, fake, "auto")
	deltas, done, err := generate(context.Background(), c, &routerv1.GenerateRequest{
		Model: "local-llama", SystemPrompt: "be brief", HasTemperature: true, Temperature: 5,
		Messages: []*routerv1.Message{{Role: "user", Content: "hello"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if deltas != "three little words" || done.GetContent() != deltas || done.GetModelName() != "llama3.2" ||
		done.GetProvider() != "custom" {
		t.Errorf("deltas %q, done %+v", deltas, done)
	}
	if done.GetUsage().GetInputTokens() != 7 || done.GetUsage().GetOutputTokens() != 3 {
		t.Errorf("usage = %+v, want 7 in, 3 out", done.GetUsage())
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d upstream requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "llama3.2" || !r.Stream || r.Temperature == nil || *r.Temperature != 2 ||
		r.Messages[0].Role != "system" || r.Messages[1].Text() != "hello" || r.Header.Get("Authorization") != "Bearer k" {
		t.Errorf("upstream request = %+v (temperature %v)", r, r.Temperature)
	}
}

func TestGenerateMapsProviderFailures(t *testing.T) {
	tests := []struct {
		name  string
		reply fakemodel.Reply
		code  codes.Code
		text  string
	}{
		{"500 is retried, then unavailable", fakemodel.Reply{Status: 500}, codes.Unavailable,
			"Custom API error for model llama3.2: HTTP 500: fake failure 500 after 4 attempt(s)"},
		{"400 is not", fakemodel.Reply{Status: 400}, codes.FailedPrecondition, "HTTP 400"},
		{"garbage", fakemodel.Reply{Raw: "data: {not json\n\n"}, codes.FailedPrecondition, "could not be read"},
		{"empty reply", fakemodel.Reply{Content: "", FinishReason: "length"}, codes.FailedPrecondition, "Finish reason: length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return tt.reply })
			_, _, err := generate(context.Background(), newRouter(t, fake, "auto"), &routerv1.GenerateRequest{
				Model: "llama3.2", Messages: []*routerv1.Message{{Role: "user", Content: "hi"}},
			})
			if status.Code(err) != tt.code || !strings.Contains(status.Convert(err).Message(), tt.text) {
				t.Errorf("err = %v, want %v containing %q", err, tt.code, tt.text)
			}
		})
	}
}

func TestGenerateCancelStopsTheUpstreamRequest(t *testing.T) {
	fake := fakemodel.New(t)
	started := make(chan struct{})
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { close(started); return fakemodel.Reply{Stall: true} })
	c := newRouter(t, fake, "auto")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, _, err := generate(ctx, c, &routerv1.GenerateRequest{Model: "llama3.2", Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; status.Code(err) != codes.Canceled {
		t.Fatalf("err = %v, want Canceled", err)
	}
	fake.WaitCancelled(t, 0)
}

func TestResolveModel(t *testing.T) {
	c := newRouter(t, fakemodel.New(t), "auto")
	tests := []struct {
		model, category, want string
		code                  codes.Code
	}{
		{"auto", "EXTENDED_REASONING", "llama3.2", codes.OK},
		{"", "fast_response", "llama3.2", codes.OK},
		{"OLLAMA-LLAMA", "", "llama3.2", codes.OK},
		{"llama3.2:8b", "", "llama3.2", codes.OK},
		{"gpt-5.2", "", "", codes.NotFound},
		{"auto", "SLOW", "", codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.category, func(t *testing.T) {
			resp, err := c.ResolveModel(context.Background(), &routerv1.ResolveModelRequest{Model: tt.model, Category: tt.category})
			if status.Code(err) != tt.code {
				t.Fatalf("err = %v, want %v", err, tt.code)
			}
			if err == nil && (resp.GetModel().GetName() != tt.want || resp.GetReason() == "") {
				t.Errorf("resolved to %q (%q), want %q", resp.GetModel().GetName(), resp.GetReason(), tt.want)
			}
		})
	}
}

func TestListModelsMarksConfiguredProviders(t *testing.T) {
	resp, err := newRouter(t, fakemodel.New(t), "gpt-5").ListModels(context.Background(), &routerv1.ListModelsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetAutoMode() {
		t.Error("DEFAULT_MODEL=gpt-5 without OpenAI configured should be effective auto mode")
	}
	configured := map[string]bool{}
	for _, m := range resp.GetModels() {
		configured[m.GetName()] = m.GetConfigured()
	}
	if !configured["llama3.2"] || configured["gpt-5"] {
		t.Errorf("configured = %v", configured)
	}
}

func TestGenerateKeepsTheOllamaTag(t *testing.T) {
	fake := fakemodel.New(t)
	c := newRouter(t, fake, "auto")
	for _, name := range []string{"llama3.2:8b", "local-llama:8b"} {
		if _, _, err := generate(context.Background(), c, &routerv1.GenerateRequest{Model: name, Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range fake.Requests() {
		if r.Model != "llama3.2:8b" {
			t.Errorf("request %d sent model %q, want llama3.2:8b", i, r.Model)
		}
	}
}

func TestUsageCarriesCostWhenPriced(t *testing.T) {
	priced, err := catalogue.Parse("priced", []byte(`{"models":[{"model_name":"llama3.2","context_window":128000,
		"input_cost_per_million_tokens":2,"output_cost_per_million_tokens":10}]}`))
	if err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "priced", PromptTokens: 1000, CompletionTokens: 500}
	})
	_, done, err := generate(context.Background(), newRouterWith(t, fake, "auto", priced), &routerv1.GenerateRequest{
		Model: "llama3.2", Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := done.GetUsage().GetCostUsd(); got < 0.006999 || got > 0.007001 {
		t.Errorf("cost = %v, want 0.007 (1000 in at $2/M, 500 out at $10/M)", got)
	}
}

func TestImagesAreCheckedAgainstTheModel(t *testing.T) {
	vision, _ := catalogue.Parse("vision", []byte(`{"models":[{"model_name":"llava","context_window":32000,"supports_images":true,"max_image_size_mb":1},
		{"model_name":"llama3.2","context_window":32000}]}`))
	fake := fakemodel.New(t)
	c := newRouterWith(t, fake, "auto", vision)
	small := "data:image/png;base64,iVBORw0KGgo="
	big := "data:image/png;base64," + strings.Repeat("A", 2<<20)
	tests := []struct {
		model  string
		images []string
		want   string
	}{
		{"llama3.2", []string{small}, "does not accept images"},
		{"llava", []string{small, small, small, small, small, small}, "at most 5"},
		{"llava", []string{big}, "accepts 1 MB"},
	}
	for _, tt := range tests {
		_, _, err := generate(context.Background(), c, &routerv1.GenerateRequest{Model: tt.model,
			Messages: []*routerv1.Message{{Role: "user", Content: "look", Images: tt.images}}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s with %d images: %v, want InvalidArgument containing %q", tt.model, len(tt.images), err, tt.want)
		}
	}
	if _, _, err := generate(context.Background(), c, &routerv1.GenerateRequest{Model: "llava",
		Messages: []*routerv1.Message{{Role: "user", Content: "look", Images: []string{small}}}}); err != nil {
		t.Errorf("a small image for a vision model: %v", err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d upstream requests, want only the valid one", n)
	}
}
