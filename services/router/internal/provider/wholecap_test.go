package provider

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// shortLines is about 10 MiB of "0,\n": short lines defeat a stream's line
// limit, and json.Decoder buffers a whole value before decoding it.
func shortLines() string {
	return strings.Repeat("0,\n", 10<<20/3)
}

// TestWholeAnswersToAStreamAreBoundLikeWholeAnswers: whatever a streaming
// request gets back that is read whole (a JSON completion, an error, the
// answer to the request made again after a refusal to stream) is bound as
// a whole answer is (text times the envelope), not by a stream's far
// looser limit (64 times the text, with only a line bounded more tightly).
// The same 10 MiB body is refused when zen asked without streaming; read
// under a stream's limits it was decoded whole into memory, or, left
// unfinished, failed as a dropped connection (retryable) on every call.
func TestWholeAnswersToAStreamAreBoundLikeWholeAnswers(t *testing.T) {
	t.Parallel()
	padded := `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` +
		`"pad":[` + shortLines() + "0]}"
	unfinished := `{"choices":[` + shortLines() // invalid: never closed
	hugeError := `{"error":{"message":"streaming is not supported","pad":[` + shortLines() + "0]}}"
	const cutOff = "the reply was cut off past 256 KiB: more than the model's output limit of 1000 tokens allows " +
		"(with a wide margin). Ask for a shorter answer, or split the work into smaller requests"
	for _, tt := range []struct {
		name   string
		stream bool
		reply  fakemodel.Reply
		// want is whether each request asked to stream, over two calls.
		want []bool
	}{
		{"asked whole", false, fakemodel.Reply{Raw: padded}, []bool{false, false}},
		{"JSON to a stream", true, fakemodel.Reply{Raw: padded}, []bool{true, false}},
		{"asked again after a refusal", true, fakemodel.Reply{Raw: padded, RefuseStream: true},
			[]bool{true, false, true, false}},
		{"an unfinished answer after a refusal", true, fakemodel.Reply{Raw: unfinished, RefuseStream: true},
			[]bool{true, false, true, false}},
		{"an error to a stream", true, fakemodel.Reply{Status: 400, Raw: hugeError}, []bool{true, true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return tt.reply })
			c := NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second))
			for call := range 2 {
				res, _, err := ask(t, c, Request{Model: "m", Stream: tt.stream, MaxTokens: 1000})
				got := "no error, content " + res.Content
				var perr *Error
				if errors.As(err, &perr) {
					got = perr.Msg
				} else if err != nil {
					got = err.Error()
				}
				if diff := cmp.Diff(cutOff, got); diff != "" {
					t.Errorf("call %d: a 10 MiB whole answer (-want +got):\n%s", call, diff)
				}
			}
			if diff := cmp.Diff(tt.want, streamFlags(fake)); diff != "" {
				t.Errorf("requests asked to stream (-want +got):\n%s", diff)
			}
		})
	}
}
