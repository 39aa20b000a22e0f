package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// sse is one chat completion chunk as an event: a delta of text and a
// finish reason, and usage when prompt is not 0.
func sse(content, finish string, prompt, completion int) string {
	choice := map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": nil}
	if finish != "" {
		choice["finish_reason"] = finish
	}
	chunk := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{choice}}
	if prompt != 0 {
		chunk["choices"] = []any{}
		chunk["usage"] = map[string]int{"prompt_tokens": prompt, "completion_tokens": completion,
			"total_tokens": prompt + completion}
	}
	b, err := json.Marshal(chunk)
	if err != nil {
		panic(err)
	}
	return "data: " + string(b) + "\n\n"
}

var (
	hello     = sse("Hel", "", 0, 0) + sse("lo", "", 0, 0) + sse("", "stop", 0, 0) + sse("", "", 9, 2)
	overload  = `{"error":{"message":"the model is overloaded","type":"server_error","code":"overloaded"}}`
	pings     = func(n int) string { return strings.Repeat(": ping\n", n) }
	longDelta = strings.Repeat("λ", 40<<10) // 80 KiB in one line
)

// eventBodies are bodies a provider may send to a streaming request, each
// with how go-openai's reader ends it (its error's text; "EOF" for a stream
// that ended well), so the comparison is known to see what each case is for.
var eventBodies = []struct{ name, body, end string }{
	{"a stream", hello + "data: [DONE]\n\n", "EOF"},
	{"comments and event lines", ": OPENROUTER PROCESSING\n\nevent: message\n" + sse("Hi", "", 0, 0) +
		": ping\n\nevent: message\nid: 2\nretry: 10\n" + sse("", "stop", 3, 1) + "data: [DONE]\n\n", "EOF"},
	{"no [DONE]", hello, "EOF"},
	{"lines after [DONE]", hello + "data: [DONE]\n\ndata: " + overload + "\n\n", "EOF"},
	{"an error mid-stream", hello + "data: " + overload + "\n\n", "error, the model is overloaded"},
	{"an error with a number code and a param", sse("a", "", 0, 0) +
		`data: {"error":{"message":"slow down","type":"requests","code":429,"param":"model"}}` + "\n", "error, slow down"},
	{"an error after a comment", ": ping\n" + sse("a", "", 0, 0) + "data: " + overload + "\n\n",
		"unexpected end of JSON input"},
	{"an error on the last line, with no newline", sse("a", "", 0, 0) + "data: " + overload, "EOF"},
	{"a null error", "data: {\"error\":null}\n\n", "unexpected end of JSON input"},
	{"an error the prefix does not match", sse("a", "", 0, 0) + `data: { "error": {"message": "spaced"}}` + "\n\n",
		"EOF"},
	{"a JSON error body", overload + "\n", "error, the model is overloaded"},
	{"a JSON error body over several lines", "{\n  \"error\": {\n    \"message\": \"Incorrect API key\",\n" +
		"    \"type\": \"invalid_request_error\",\n    \"code\": \"invalid_api_key\"\n  }\n}\n",
		"error, Incorrect API key"},
	{"a JSON error body with no newline", overload, "EOF"},
	{"garbage data", "data: {not json\n\n", "invalid character 'n' looking for beginning of object key string"},
	{"a delta of the wrong type", `data: {"choices":[{"delta":{"content":5}}]}` + "\n\n",
		"json: cannot unmarshal number into Go struct field ChatCompletionStreamChoiceDelta.choices.delta.content " +
			"of type string"},
	{"chunks that leave fields out", sse("a", "stop", 0, 0) + `data: {"choices":[{"delta":{}}]}` + "\n\n" +
		sse("", "", 4, 2) + `data: {"choices":[{}, {"delta":{"content":"b"}}]}` + "\n", "EOF"},
	{"an empty data line", sse("a", "", 0, 0) + "data:\n\n", "unexpected end of JSON input"},
	{"300 lines without data between events", sse("a", "", 0, 0) + pings(299) + sse("b", "stop", 0, 0) +
		"data: [DONE]\n", "EOF"},
	{"301 lines without data between events", sse("a", "", 0, 0) + pings(300) + sse("b", "stop", 0, 0),
		"stream has sent too many empty messages"},
	{"lines longer than the buffer and than 64 KiB", sse(strings.Repeat("x", 5000), "", 0, 0) +
		sse(longDelta, "", 0, 0) + sse(longDelta, "length", 0, 0) + "data: [DONE]\n", "EOF"},
	{"CRLF line endings", strings.ReplaceAll(hello, "\n", "\r\n") + "data: [DONE]\r\n\r\n", "EOF"},
	{"data with no space, tabs and trailing space", "data:" + strings.TrimPrefix(sse("a", "", 0, 0), "data: ") +
		"data:\t\t" + strings.TrimSuffix(strings.TrimPrefix(sse("b", "", 0, 0), "data: "), "\n\n") + "  \t\n" +
		"data:\t[DONE] \n", "EOF"},
	{"white space around a line", "\v \u00a0" + strings.TrimSuffix(sse("a", "", 0, 0), "\n\n") + "\u2003\n", "EOF"},
	{"white space the data prefix keeps", "data:\v" + strings.TrimPrefix(sse("a", "", 0, 0), "data: "),
		"invalid character '\\v' looking for beginning of value"},
	{"DATA is not data", "DATA: " + strings.TrimPrefix(sse("a", "", 0, 0), "data: "), "EOF"},
	{"text that is not a stream", "this is not a stream", "EOF"},
}

// streamSummary is what a caller learns from reading a stream: each
// chunk's deltas, finish reasons and usage, and how reading ended.
type streamSummary struct {
	Chunks   []chunkSummary
	End      string
	APIError *openai.APIError
	TooMany  bool
}

type chunkSummary struct {
	Contents, FinishReasons []string
	Usage                   []int
}

// summarize reads with recv until it fails, as Compat.stream does.
func summarize(recv func() (chunkSummary, error)) streamSummary {
	var s streamSummary
	for {
		c, err := recv()
		if err != nil {
			s.End = err.Error()
			errors.As(err, &s.APIError)
			s.TooMany = errors.Is(err, openai.ErrTooManyEmptyStreamMessages)
			return s
		}
		s.Chunks = append(s.Chunks, c)
	}
}

// TestEventReaderMatchesGoOpenAI: zen's event reader reads every body as
// go-openai's stream reader does (the same chunks, and the same error, so
// wrap reports it the same), whether the body arrives in one read or in
// many.
func TestEventReaderMatchesGoOpenAI(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	bodies := map[string]string{}
	for _, tc := range eventBodies {
		bodies[tc.name] = tc.body
	}
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Raw: bodies[r.Model], ContentType: "text/event-stream"}
	})
	cfg := openai.DefaultConfig("k")
	cfg.BaseURL = fake.URL()
	client := openai.NewClientWithConfig(cfg)
	for _, tc := range eventBodies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream, err := client.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
				Model: tc.name, Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			want := summarize(func() (chunkSummary, error) {
				chunk, err := stream.Recv()
				var c chunkSummary
				for _, ch := range chunk.Choices {
					c.Contents = append(c.Contents, ch.Delta.Content)
					c.FinishReasons = append(c.FinishReasons, string(ch.FinishReason))
				}
				if chunk.Usage != nil {
					c.Usage = []int{chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens}
				}
				return c, err
			})
			if want.End != tc.end {
				t.Fatalf("go-openai ended the stream with %q, not %q: the case does not test what it says", want.End, tc.end)
			}
			for _, in := range []struct {
				name string
				r    io.Reader
			}{
				{"in one read", strings.NewReader(tc.body)},
				{"a byte at a time", iotest.OneByteReader(strings.NewReader(tc.body))},
				{"with EOF on the last read", iotest.DataErrReader(strings.NewReader(tc.body))},
			} {
				events := newEventReader(in.r, cfg.EmptyMessagesLimit)
				var chunk streamChunk
				got := summarize(func() (chunkSummary, error) {
					err := events.next(&chunk)
					var c chunkSummary
					for _, ch := range chunk.Choices {
						c.Contents = append(c.Contents, ch.Delta.Content)
						c.FinishReasons = append(c.FinishReasons, ch.FinishReason)
					}
					if chunk.Usage != nil {
						c.Usage = []int{chunk.Usage.PromptTokens, chunk.Usage.CompletionTokens}
					}
					return c, err
				})
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("read %s (-go-openai +zen):\n%s", in.name, diff)
				}
			}
		})
	}
}

// TestCompatReadsStreamsWithItsOwnReader: every answer go-openai would
// have read as a stream reaches the event reader, whatever its status and
// label; a field zen does not use is not checked (go-openai refused the
// chunk).
func TestCompatReadsStreamsWithItsOwnReader(t *testing.T) {
	t.Parallel()
	want := Result{Content: "Hello", FinishReason: "stop", Usage: Usage{InputTokens: 9, OutputTokens: 2}}
	tests := []struct {
		name  string
		reply fakemodel.Reply
		want  Result
	}{
		{"an event stream", fakemodel.Reply{Raw: hello, ContentType: "text/event-stream"}, want},
		{"labelled JSON", fakemodel.Reply{Raw: hello}, want},
		{"with status 203", fakemodel.Reply{Raw: hello, Status: 203}, want},
		{"unused fields of other types", fakemodel.Reply{Raw: `data: {"id":5,"choices":[{"index":"0",` +
			`"delta":{"content":"Hi","role":7}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":"2"}}` +
			"\n\ndata: [DONE]\n\n", ContentType: "text/event-stream"},
			Result{Content: "Hi", Usage: Usage{InputTokens: 1, OutputTokens: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return tt.reply })
			c := NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second))
			res, deltas, err := ask(t, c, Request{Model: "m", Stream: true})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if deltas != tt.want.Content {
				t.Errorf("deltas %q, want %q", deltas, tt.want.Content)
			}
		})
	}
}
