package provider

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// chunkPayloads are chunks as providers send them, and the odd ones
// scanChunk must either decode as encoding/json does or leave to it.
var chunkPayloads = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,` +
		`"delta":{"role":"assistant","content":"Hello"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,` +
		`"prompt_tokens_details":{"cached_tokens":0}}}`,
	`{"choices":[{"delta":{"content":"line\nbreak \"quoted\" \u00e9 \ud83d\ude00 <b>"}}]}`,
	`{"choices":[{"delta":{"content":null},"finish_reason":null}]}`,
	`{"choices":[{"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"delta":{"content":"","content":"b"}}]}`,
	`{"choices":[{"delta":{"Content":"a"}}]}`,
	`{"Choices":[{"delta":{"content":"a"}}]}`,
	`{"choices":[{"delta":{"content":5}}]}`,
	`{"choices":[{"delta":"text"}]}`,
	`{"choices":{"delta":{}}}`,
	`{"choices":null}`,
	`{"choices":[null,{"delta":null}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[]}`,
	`{"usage":{"prompt_tokens":1.0}}`,
	`{"usage":{"prompt_tokens":1e2}}`,
	`{"usage":{"prompt_tokens":-0,"completion_tokens":99999999999999999999}}`,
	`{"usage":{"prompt_tokens":7,"prompt_tokens":8}}`,
	`{"usage":[]}`,
	`{"x":{"y":[1,2,{"z":"}]"}]},"choices":[{"delta":{"content":"after"}}],"w":true,"v":-1.5e3}`,
	`{"choices":[{"delta":{"content":"\xff\xfe"}}]}`,
	`{"ch\u006fices":[{"delta":{"content":"escaped key"}}]}`,
	` { "choices" : [ { "delta" : { "content" : "spaced" } } ] } `,
	`null`,
	`[]`,
	`{}`,
	`{"choices":[{"delta":{"content":"a"}}]} trailing`,
	`{"choices":[{"delta":{"content":"a"}}]`,
	``,
}

// FuzzScanChunk: wherever scanChunk decodes a payload, encoding/json
// decodes it without error to the same chunk, from the same reused choices.
func FuzzScanChunk(f *testing.F) {
	for _, p := range chunkPayloads {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, reused := range [][]streamChoice{nil, make([]streamChoice, 0, 2)} {
			var got streamChunk
			got.Choices = reused
			if !scanChunk(payload, &got) {
				continue
			}
			want := streamChunk{Choices: make([]streamChoice, 0, cap(reused))}
			if reused == nil {
				want.Choices = nil
			}
			if err := json.Unmarshal(payload, &want); err != nil {
				t.Fatalf("scanChunk decoded %q, which encoding/json refuses: %v", payload, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%q (-encoding/json +scanChunk):\n%s", payload, diff)
			}
		}
	})
}

// TestScanChunkTakesTheUsualChunks: the chunks providers send are decoded
// here, not left to encoding/json, so the fuzz target compares decodings.
func TestScanChunkTakesTheUsualChunks(t *testing.T) {
	t.Parallel()
	for _, p := range chunkPayloads[:5] {
		var c streamChunk
		if !scanChunk([]byte(p), &c) {
			t.Errorf("scanChunk left %s to encoding/json", p)
		}
	}
}
