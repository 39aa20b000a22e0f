package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/platform/reply"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// rawRequest is one HTTP request to the MCP endpoint, as a client might
// send it, well formed or not.
type rawRequest struct {
	name    string
	header  map[string]string // set; an empty value deletes the header
	body    string
	version string // Mcp-Protocol-Version, "" for none
	fast    bool   // fastcall answers it; otherwise the SDK does
}

// rawAnswer is what a client reads: the status, the headers the SDK sets
// and the body.
type rawAnswer struct {
	Status                               int
	ContentType, CacheControl, SessionID string
	Body                                 string
}

// traceIDs differ per call: the answers of two calls are compared with
// them masked.
var traceIDs = regexp.MustCompile(`[0-9a-f]{32}`)

func masked(a rawAnswer) rawAnswer {
	a.Body = traceIDs.ReplaceAllString(a.Body, "<trace>")
	return a
}

// request sends r to url and returns the response, its body unread.
func request(ctx context.Context, t *testing.T, url string, r rawRequest) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.version != "" {
		req.Header.Set("Mcp-Protocol-Version", r.version)
	}
	for k, v := range r.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// countSDKAnswers counts the requests s hands to the SDK.
func countSDKAnswers(s *Server) *atomic.Int64 {
	var n atomic.Int64
	s.sdkSeen = func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			h.ServeHTTP(w, r)
		})
	}
	return &n
}

func send(t *testing.T, url string, r rawRequest) rawAnswer {
	t.Helper()
	res := request(t.Context(), t, url, r)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawAnswer{Status: res.StatusCode, ContentType: res.Header.Get("Content-Type"),
		CacheControl: res.Header.Get("Cache-Control"), SessionID: res.Header.Get("Mcp-Session-Id"),
		Body: string(body)}
}

// TestFastCallsAnswerAsTheSDK holds fastcall to the SDK's answers, byte
// for byte: every request goes to an edge with fastcall and to the same
// edge without it, for each way a call can end.
func TestFastCallsAnswerAsTheSDK(t *testing.T) {
	t.Parallel()
	answer := &reply.Reply{Status: reply.StatusSuccess, Content: "<b>a & b</b>\u2028é \"q\"\n",
		ContentType: reply.Text, Metadata: reply.Metadata{ToolName: "chat", ModelUsed: "llama3.2"}}
	failed := &reply.Reply{Status: reply.StatusError, Content: "the tool failed",
		Metadata: reply.Metadata{ToolName: "chat"}}
	// Calls with a progress token hear of the model chosen, then of each
	// step the executor reports.
	steps := []string{"asking llama3.2", "<reading> \"files\" \u2028 é"}
	outcomes := map[string]*fakeRoles{
		"answer":         {result: &executorv1.ToolResult{Reply: answer.Encode()}, progress: steps},
		"tool error":     {result: &executorv1.ToolResult{Reply: failed.Encode(), IsError: true}},
		"executor fails": {execute: status.Error(codes.Internal, "boom"), progress: steps},
		"memory down":    {memoryDown: true, result: &executorv1.ToolResult{Reply: answer.Encode()}},
	}
	for outcome, roles := range outcomes {
		t.Run(outcome, func(t *testing.T) {
			t.Parallel()
			// No heartbeat or keep-alive falls within a call, however slow
			// the machine: each path would send them at its own moments
			// (TestFastCallsSendHeartbeats holds fastcall to them). With the
			// tests' second, a call that took longer under load differed.
			s := edgeServer(t, roles, func(c *Config) { c.ProgressInterval = time.Hour })
			sdkAnswered := countSDKAnswers(s)
			fast := httptest.NewServer(s.Handler())
			t.Cleanup(fast.Close)
			s.sdkOnly, s.sdkSeen = true, nil
			sdk := httptest.NewServer(s.Handler())
			t.Cleanup(sdk.Close)
			for _, r := range callRequests() {
				want := masked(send(t, sdk.URL, r))
				before := sdkAnswered.Load()
				got := masked(send(t, fast.URL, r))
				if bySDK := sdkAnswered.Load() > before; bySDK == r.fast {
					t.Errorf("%s: answered by the SDK %v, want %v", r.name, bySDK, !r.fast)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: fastcall's answer differs from the SDK's (-sdk +fastcall):\n%s", r.name, diff)
				}
			}
		})
	}
}

// TestFastCallsAnswerWhatTheyShould: the common calls of each protocol
// version are answered, not refused, so the comparison above compares
// answers (a broken fake would make both paths fail alike).
func TestFastCallsAnswerWhatTheyShould(t *testing.T) {
	t.Parallel()
	answer := &reply.Reply{Status: reply.StatusSuccess, Content: "fine", Metadata: reply.Metadata{ToolName: "chat"}}
	url := edgeOver(t, &fakeRoles{result: &executorv1.ToolResult{Reply: answer.Encode()}})
	for _, r := range callRequests() {
		if !r.fast || !strings.HasSuffix(r.name, "/plain") {
			continue
		}
		got := send(t, url, r)
		if got.Status != http.StatusOK || !strings.Contains(got.Body, `\"content\":\"fine\"`) {
			t.Errorf("%s: %d %s", r.name, got.Status, got.Body)
		}
	}
}

// TestFastCallsSendHeartbeats: a call with a progress token that fastcall
// answers hears the heartbeats while the model works (each progress
// greater than the last), then its answer, on one event stream.
func TestFastCallsSendHeartbeats(t *testing.T) {
	t.Parallel()
	answer := &reply.Reply{Status: reply.StatusSuccess, Content: "done", Metadata: reply.Metadata{ToolName: "chat"}}
	roles := &fakeRoles{result: &executorv1.ToolResult{Reply: answer.Encode()}, hold: make(chan struct{})}
	s := edgeServer(t, roles, func(c *Config) { c.ProgressInterval = 10 * time.Millisecond })
	sdkAnswered := countSDKAnswers(s)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"hb"},` +
		`"name":"chat","arguments":{"prompt":"hello","model":"llama3.2"}}}`
	// A stream that never brings the heartbeats ends with a failure, not a
	// hang.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res := request(ctx, t, srv.URL, rawRequest{body: body, version: "2025-11-25"})
	defer res.Body.Close()
	events := bufio.NewScanner(res.Body)
	next := func() map[string]any {
		t.Helper()
		for events.Scan() {
			data, ok := strings.CutPrefix(events.Text(), "data: ")
			if !ok {
				continue
			}
			var msg map[string]any
			if err := json.Unmarshal([]byte(data), &msg); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			return msg
		}
		t.Fatalf("the stream ended: %v", events.Err())
		return nil
	}
	last := 0.0
	for heartbeats := 0; heartbeats < 3; {
		msg := next()
		params, _ := msg["params"].(map[string]any)
		if msg["method"] != "notifications/progress" || params["progressToken"] != "hb" {
			t.Fatalf("while the call runs: %v, want its progress", msg)
		}
		if p, _ := params["progress"].(float64); p <= last {
			t.Fatalf("progress %v after %v: it must increase", p, last)
		} else {
			last = p
		}
		if m, _ := params["message"].(string); strings.Contains(m, "elapsed") {
			heartbeats++
		}
	}
	close(roles.hold)
	for {
		msg := next()
		if msg["method"] == "notifications/progress" {
			continue // a heartbeat sent before the call ended
		}
		result, _ := msg["result"].(map[string]any)
		if msg["id"] != 1.0 || result == nil || result["isError"] == true {
			t.Fatalf("the answer: %v", msg)
		}
		break
	}
	if sdkAnswered.Load() != 0 {
		t.Error("the SDK answered the call; fastcall should have")
	}
}
