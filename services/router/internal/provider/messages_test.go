package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
)

// FuzzEncodeMessages: the body zen sends is the one go-openai would: the
// messages it encodes are go-openai's encoding of them, and put into the
// body go-openai built without them, they make go-openai's whole body.
func FuzzEncodeMessages(f *testing.F) {
	f.Add("m", "system", "be brief", "user", "<b>a & b</b>\u2028 \"q\"\n\x00\xff", "", float32(0), 0, true)
	f.Add("gpt-5", "assistant", "", "user", "", "data:image/png;base64,AAAA", float32(0.7), 512, false)
	f.Add("", "", "", "", "", "", float32(0), 0, false)
	// A body whose head is longer than the room left for it is made in a copy.
	f.Add(strings.Repeat("m", headRoom), "user", "hi", "user", "", "", float32(1), 1, true)
	f.Fuzz(func(t *testing.T, model, role1, content1, role2, content2, image string, temp float32, maxTokens int,
		stream bool) {
		req := openai.ChatCompletionRequest{Model: model, Stream: stream, Temperature: temp,
			MaxCompletionTokens: maxTokens, Messages: []openai.ChatCompletionMessage{
				{Role: role1, Content: content1}, {Role: role2, Content: content2}}}
		if image != "" {
			req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: "user",
				MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: content1},
					{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: image}}}})
		}
		want, wantErr := json.Marshal(req) // go-openai's request encoder
		ctx, stub := withMessages(context.Background(), req)
		held, _ := ctx.Value(messagesKey{}).(*heldMessages)
		if held == nil {
			if wantErr == nil {
				t.Fatalf("messages go-openai encodes were not held: %+v", req.Messages)
			}
			return
		}
		got := spliceStub(t, stub, held)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("(-go-openai +zen):\n%s", diff)
		}
	})
}

// spliceStub is the body go-openai builds for stub (a request whose
// messages withMessages held), with held's messages spliced in.
func spliceStub(t *testing.T, stub openai.ChatCompletionRequest, held *heldMessages) []byte {
	t.Helper()
	built, err := json.Marshal(stub)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := spliceMessages(built, held)
	if !ok {
		t.Fatalf("no placeholder in %s", built)
	}
	return got
}

// TestRequestBodiesAreGoOpenAIs: through the HTTP client, streamed or not,
// the provider receives the body go-openai would have sent; one whose
// placeholder is missing is sent whole.
func TestRequestBodiesAreGoOpenAIs(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		http.Error(w, `{"error":{"message":"recorded"}}`, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	send := func(hc openai.HTTPDoer, ctx context.Context, req openai.ChatCompletionRequest) []byte {
		cfg := openai.DefaultConfig("k")
		cfg.BaseURL, cfg.HTTPClient = srv.URL, hc
		c := openai.NewClientWithConfig(cfg)
		if req.Stream {
			_, _ = c.CreateChatCompletionStream(ctx, req)
		} else {
			_, _ = c.CreateChatCompletion(ctx, req)
		}
		mu.Lock()
		defer mu.Unlock()
		return bodies[len(bodies)-1]
	}
	for _, stream := range []bool{true, false} {
		req := openai.ChatCompletionRequest{Model: "m", Stream: stream, Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "be <brief>"}, {Role: "user", Content: "héllo \"there\"\n"}}}
		want := send(&http.Client{}, context.Background(), req)
		ctx, stub := withMessages(context.Background(), req)
		got := send(libraryClient(&http.Client{}), ctx, stub)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("stream %v (-go-openai +zen):\n%s", stream, diff)
		}
	}
	// No messages at all: go-openai's null, untouched.
	empty := openai.ChatCompletionRequest{Model: "m"}
	ctx, stub := withMessages(context.Background(), empty)
	if got, want := send(libraryClient(&http.Client{}), ctx, stub), send(&http.Client{}, context.Background(),
		empty); string(got) != string(want) {
		t.Errorf("a request without messages went as %s, want %s", got, want)
	}
}

// TestABodyWithoutItsPlaceholderFails: should go-openai build a body
// that does not hold "messages":null, the call fails, saying so, rather
// than send a request without its messages.
func TestABodyWithoutItsPlaceholderFails(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the request was sent: %s %s", r.Method, r.URL)
	}))
	t.Cleanup(srv.Close)
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user",
		Content: "x"}}}
	ctx, _ := withMessages(context.Background(), req)
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL, cfg.HTTPClient = srv.URL, libraryClient(&http.Client{})
	_, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(ctx, req) // messages in: no placeholder
	if err == nil || !strings.Contains(err.Error(), "go-openai upgrade") {
		t.Errorf("err = %v, want one that names the cause", err)
	}
}

// TestGoOpenAIVersion: messages.go writes what go-openai v1.43.0 writes
// and relies on its "messages" having no omitempty; another version may
// differ. Check FuzzEncodeMessages against it before changing this.
func TestGoOpenAIVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/sashabaranov/go-openai").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if v := strings.TrimSpace(string(out)); v != "v1.43.0" {
		t.Errorf("go-openai is %s; messages.go was checked against v1.43.0", v)
	}
}

// BenchmarkEncodeMessages holds the encoded messages of a call that
// continues a 50-turn thread (withMessages): a system prompt, and the
// history and new input in one user message, as the executor's chat sends
// them.
func BenchmarkEncodeMessages(b *testing.B) {
	messages := []openai.ChatCompletionMessage{
		{Role: "system", Content: strings.Repeat("You are a senior engineer; answer briefly, and say why.\n", 40)},
		{Role: "user", Content: strings.Repeat("\n--- Turn 7 (gpt-5 using chat via openai) ---\nIt is so because "+
			"the cache is \"warm\" by then.\n", 60)},
	}
	req := openai.ChatCompletionRequest{Model: "gpt-5", Stream: true, Messages: messages}
	b.ReportAllocs()
	for b.Loop() {
		if ctx, _ := withMessages(b.Context(), req); ctx.Value(messagesKey{}) == nil {
			b.Fatal("no messages held")
		}
	}
}

// TestASecondBodyLeavesTheFirst: a body is made in place around the held
// messages once; a second (a request sent again with the same context)
// is made in a copy, and the first still reads as it did.
func TestASecondBodyLeavesTheFirst(t *testing.T) {
	t.Parallel()
	req := openai.ChatCompletionRequest{Model: "a", Messages: []openai.ChatCompletionMessage{
		{Role: "user", Content: "hello"}}}
	ctx, stub := withMessages(t.Context(), req)
	held := ctx.Value(messagesKey{}).(*heldMessages)
	body := func(model string) []byte {
		stub.Model = model
		return spliceStub(t, stub, held)
	}
	first := body("a")
	want := string(first)
	// The first is made in place: its messages are the held ones.
	if at := bytes.Index(first, []byte(`"messages":[`)) + len(`"messages":`); &first[at] != &held.buf[held.at] {
		t.Error("the first body was made in a copy, not around the held messages")
	}
	second := body("bb")
	req.Model = "bb"
	wantSecond, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(first)); diff != "" {
		t.Errorf("the second body changed the first (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(string(wantSecond), string(second)); diff != "" {
		t.Errorf("second body (-go-openai +zen):\n%s", diff)
	}
}

// TestMessagesWithMoreThanTextAreGoOpenAIs: a message with a name, tool
// calls, a tool call's id or parts is not plain text, and is encoded as
// go-openai encodes it, in a body that is go-openai's.
func TestMessagesWithMoreThanTextAreGoOpenAIs(t *testing.T) {
	t.Parallel()
	for _, m := range []openai.ChatCompletionMessage{
		{Role: "user", Content: "hi <there>", Name: "ann"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "f", Arguments: `{"a":"<b>"}`}}}},
		{Role: "tool", Content: "42 & more", ToolCallID: "c1"},
		{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "look"},
			{Type: openai.ChatMessagePartTypeImageURL,
				ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AA"}}}},
	} {
		req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "be brief"}, m}}
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		ctx, stub := withMessages(t.Context(), req)
		got := spliceStub(t, stub, ctx.Value(messagesKey{}).(*heldMessages))
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%+v (-go-openai +zen):\n%s", m, diff)
		}
	}
}
