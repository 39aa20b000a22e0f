package provider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
)

// FuzzEncodeMessages: the body zen sends is the one go-openai would: the
// messages it encodes are go-openai's encoding of them, and put into the
// body go-openai built without them, they make go-openai's whole body.
func FuzzEncodeMessages(f *testing.F) {
	f.Add("system", "be brief", "user", "<b>a & b</b>\u2028 \"q\"\n\x00\xff", "", float32(0), 0, true)
	f.Add("assistant", "", "user", "", "data:image/png;base64,AAAA", float32(0.7), 512, false)
	f.Fuzz(func(t *testing.T, role1, content1, role2, content2, image string, temp float32, maxTokens int,
		stream bool) {
		req := openai.ChatCompletionRequest{Model: "m", Stream: stream, Temperature: temp,
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
		built, err := json.Marshal(stub)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := spliceMessages(built, held.encoded)
		if !ok {
			t.Fatalf("no placeholder in %s", built)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("(-go-openai +zen):\n%s", diff)
		}
	})
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
	send := func(hc *http.Client, ctx context.Context, req openai.ChatCompletionRequest) []byte {
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
	// A body go-openai built otherwise (no placeholder): the whole request.
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user",
		Content: "x"}}}
	ctx, _ := withMessages(context.Background(), req)
	want := send(&http.Client{}, context.Background(), req)
	if got := send(libraryClient(&http.Client{}), ctx, req); string(got) != string(want) {
		t.Errorf("a body without the placeholder went as %s, want %s", got, want)
	}
}
