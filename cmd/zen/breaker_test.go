package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// scrape reads zen's /metrics at addr.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// series lists the exposition lines of the metric named exactly name.
func series(text, name string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// sample is the value of name's series whose labels include all of want.
func sample(text, name string, want ...string) string {
	for _, line := range series(text, name) {
		if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(line, w) }) {
			return line[strings.LastIndexByte(line, ' ')+1:]
		}
	}
	return ""
}

// TestABrokenModelLeavesItsProviderServing: one client's bad OpenRouter
// model name fails its calls and rests that model only; the provider's
// healthy model answers the very next call (issue 12, item 1).
func TestABrokenModelLeavesItsProviderServing(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		if r.Model == "acme/fake-broken" {
			return fakemodel.Reply{Status: http.StatusServiceUnavailable}
		}
		return fakemodel.Reply{Content: "healthy answer"}
	})
	p := startZen(t, map[string]string{
		"OPENROUTER_API_KEY": "r-key", "OPENROUTER_BASE_URL": fake.URL(), "ZEN_PROVIDER_ATTEMPTS": "1",
		"ZEN_METRICS_ADDR": "127.0.0.1:0",
	}, []string{"mcp", "metrics"}, serveArgs()...)
	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
	chat := func(model string) (bool, string) {
		res, _ := callTool(t, cs, "chat", map[string]any{"prompt": "hi", "model": model,
			"working_directory_absolute_path": t.TempDir()})
		return res.IsError, text(res)
	}
	brokenCalls := func() int {
		other := func(r fakemodel.Request) bool { return r.Model != "acme/fake-broken" }
		return len(slices.DeleteFunc(fake.Requests(), other))
	}

	for i := range 3 {
		if failed, msg := chat("acme/fake-broken"); !failed {
			t.Fatalf("call %d to the broken model answered: %s", i+1, msg)
		}
	}
	if failed, msg := chat("openai/gpt-5"); failed || !strings.Contains(msg, "healthy answer") {
		t.Fatalf("the provider's healthy model, the very next call: %s", msg)
	}
	sent := brokenCalls()
	if failed, msg := chat("acme/fake-broken"); !failed || !strings.Contains(msg, "cooling down") {
		t.Errorf("the broken model after 3 failures: %s, want its breaker open", msg)
	}
	if n := brokenCalls() - sent; n != 0 {
		t.Errorf("the broken model's open breaker let %d requests through", n)
	}

	metrics := scrape(t, p.addr("metrics"))
	got := map[string]string{
		"opened": sample(metrics, "zen_breaker_opened_total", `provider="openrouter"`, `scope="model"`),
		"open":   sample(metrics, "zen_breaker_open", `provider="openrouter"`, `scope="model"`),
	}
	if diff := cmp.Diff(map[string]string{"opened": "1", "open": "1"}, got); diff != "" {
		t.Errorf("breaker metrics (-want +got):\n%s\n%s", diff, strings.Join(series(metrics, "zen_breaker_open"), "\n"))
	}
	if log := p.logText(); !regexp.MustCompile(`"msg":"breaker open".*"model":"acme/fake-broken"`).MatchString(log) {
		t.Errorf("no breaker open line for acme/fake-broken in the log:\n%s", log)
	}
}

// TestModelLabelsStayBounded: a thousand OpenRouter model names a client
// made up add no series beyond one "other" (issue 12, item 4), as read
// from the router role's Prometheus endpoint.
func TestModelLabelsStayBounded(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	rt := startZen(t, map[string]string{
		"OPENROUTER_API_KEY": "r-key", "OPENROUTER_BASE_URL": fake.URL(),
		"ZEN_GRPC_ADDR": "127.0.0.1:0", "ZEN_METRICS_ADDR": "127.0.0.1:0",
	}, []string{"grpc", "metrics"}, "router")
	conn, err := grpc.NewClient(rt.addr("grpc"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	router := routerv1.NewRouterServiceClient(conn)
	names := []string{"openai/gpt-5"}
	for i := range 1000 {
		names = append(names, fmt.Sprintf("vendor-%d/model-%d", i, i))
	}
	for _, name := range names {
		if err := generateOnce(t.Context(), router, name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	metrics := scrape(t, rt.addr("metrics"))
	labels := regexp.MustCompile(`model="([^"]*)"`)
	count, got := map[string]int{}, map[string][]string{}
	for _, name := range []string{"zen_model_calls_total", "zen_model_tokens_total", "zen_model_duration_seconds_count"} {
		for _, line := range series(metrics, name) {
			label := "(none)"
			if m := labels.FindStringSubmatch(line); m != nil {
				label = m[1]
			}
			count[name]++
			got[name] = append(got[name], label)
		}
		slices.Sort(got[name])
	}
	wantCount := map[string]int{
		"zen_model_calls_total":            2,
		"zen_model_tokens_total":           4,
		"zen_model_duration_seconds_count": 2,
	}
	if diff := cmp.Diff(wantCount, count); diff != "" {
		t.Fatalf("series after %d model names (-want +got):\n%s", len(names), diff)
	}
	want := map[string][]string{
		"zen_model_calls_total":            {"openai/gpt-5", "other"},
		"zen_model_tokens_total":           {"openai/gpt-5", "openai/gpt-5", "other", "other"},
		"zen_model_duration_seconds_count": {"openai/gpt-5", "other"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model labels (-want +got):\n%s", diff)
	}
}

// generateOnce makes one model call through the router and reads it to
// the end.
func generateOnce(ctx context.Context, router routerv1.RouterServiceClient, model string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	stream, err := router.Generate(ctx, &routerv1.GenerateRequest{Model: model,
		Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			return err
		}
		if msg.GetDone() != nil {
			return nil
		}
	}
}

// TestOneClientsFailuresRestTheModelForItAlone: a client whose requests
// make the provider fail (here a 500 on what it sends) rests the model for
// itself; another client's call to the same model is answered, across the
// edge, the executor and the router of one zen.
func TestOneClientsFailuresRestTheModelForItAlone(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		for _, m := range r.Messages {
			if strings.Contains(m.Text(), "poison") {
				return fakemodel.Reply{Status: http.StatusInternalServerError}
			}
		}
		return fakemodel.Reply{Content: "healthy answer"}
	})
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice "+aliceToken+"\nbob "+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startZen(t, map[string]string{
		"OPENROUTER_API_KEY": "r-key", "OPENROUTER_BASE_URL": fake.URL(), "ZEN_PROVIDER_ATTEMPTS": "1",
		"ZEN_AUTH_TOKENS_FILE": tokens,
	}, []string{"mcp"}, serveArgs()...)
	url := "http://" + p.addr("mcp") + "/mcp"
	chat := func(token, prompt string) (bool, string) {
		cs, err := connectAs(t, url, token)
		if err != nil {
			t.Fatal(err)
		}
		res, _ := callTool(t, cs, "chat", map[string]any{"prompt": prompt, "model": "openai/gpt-5",
			"working_directory_absolute_path": t.TempDir()})
		return res.IsError, text(res)
	}
	for i := range 3 {
		if failed, msg := chat(bobToken, "poison "+fmt.Sprint(i)); !failed {
			t.Fatalf("bob's poisoned call %d answered: %s", i+1, msg)
		}
	}
	if failed, msg := chat(bobToken, "hi"); !failed || !strings.Contains(msg, "cooling down") {
		t.Errorf("bob's call after 3 failures of its own: %s, want the model resting for bob", msg)
	}
	if failed, msg := chat(aliceToken, "hi"); failed || !strings.Contains(msg, "healthy answer") {
		t.Errorf("alice's call after bob's failures: %s, want it answered", msg)
	}
}
