package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// usualChunks are chunks as providers send them: scanChunk decodes them.
var usualChunks = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,` +
		`"delta":{"role":"assistant","content":"Hello"},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`,
	`{"id":"c","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,` +
		`"prompt_tokens_details":{"cached_tokens":0}}}`,
	`{"choices":[{"delta":{"content":"line\nbreak \"quoted\" \u00e9 \ud83d\ude00 <b>"}}]}`,
	`{"choices":[{"delta":{"content":null},"finish_reason":null}]}`,
}

// oddChunks are payloads scanChunk must decode as encoding/json does or
// leave to it.
var oddChunks = []string{
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
	`{"choices":[{"finish_reason":"x"}],"choices":[{"delta":{}}]}`,  // json fills the same element again
	`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`, // json decodes into the same usage
	`{"usage":{"Completion_tokens":1}}`,
	`{"usage":{"prompt_tokens":1.0}}`,
	`{"usage":{"prompt_tokens":1e2}}`,
	`{"usage":{"prompt_tokens":-0,"completion_tokens":99999999999999999999}}`,
	`{"usage":{"prompt_tokens":7,"prompt_tokens":8}}`,
	`{"usage":[]}`,
	`{"x":{"y":[1,2,{"z":"}]"}]},"choices":[{"delta":{"content":"after"}}],"w":true,"v":-1.5e3}`,
	"{\"choices\":[{\"delta\":{\"content\":\"\xff\xfe\"}}]}", // not UTF-8
	`{"ch\u006fices":[{"delta":{"content":"escaped key"}}]}`,
	` { "choices" : [ { "delta" : { "content" : "spaced" } } ] } `,
	`null`,
	`[]`,
	`{}`,
	`{"choices":[{"delta":{"content":"a"}}]} trailing`,
	`{"choices":[{"delta":{"content":"a"}}]`,
	``,
	// Not JSON, one error each. scanChunk checks the syntax itself, so these
	// hold it to leaving each to encoding/json, which refuses it.
	`{,"choices":[]}`,
	`{"choices":[],}`,
	`{"choices":[,{"delta":{"content":"a"}}]}`,
	`{"choices":[{"delta":{"content":"a"}},]}`,
	`{"choices":[{"delta":{"content":"a"}}{"delta":{}}]}`,
	`{"choices" [{"delta":{"content":"a"}}]}`,
	`{"choices":[{"delta":{"content" "a"}}]}`,
	`{"choices":[{"delta":{"content":"a"} "x":1}]}`,
	"{\"choices\":[{\"delta\":{\"content\":\"tab\there\"}}]}", // a raw control character
	"{\"id\":\"a\x01b\",\"choices\":[]}",
	`{"id":"\q","choices":[]}`,
	`{"id":"\u12","choices":[]}`,
	`{"id":nul,"choices":[]}`,
	`{"id":nulll,"choices":[]}`,
	`{"id":tru,"choices":[]}`,
	`{"id":falsey,"choices":[]}`,
	`{"id":01,"choices":[]}`,
	`{"id":1.,"choices":[]}`,
	`{"id":-,"choices":[]}`,
	`{"id":1e,"choices":[]}`,
	`{"id":+1,"choices":[]}`,
	`{"id":.5,"choices":[]}`,
	`{"x":[1 2],"choices":[]}`,
	`{"x":{"a" 1},"choices":[]}`,
	`{"x":{"a":1,},"choices":[]}`,
	`{"x":{1:2},"choices":[]}`,
	`{"x":[1,],"choices":[]}`,
	`{"x":]}`,
	`{"usage":{"prompt_tokens":01}}`,
	`{"usage":{"prompt_tokens":-}}`,
	`{"usage":{"prompt_tokens":--1}}`,
	`{"choices":[{"delta":nul}]}`,
	`{"choices":nul}`,
	`{"choices":[{"delta":{"content":"a"}}]}}`,
	`{"id":nulx,"choices":[]}`,
	`{"id":trUe,"choices":[]}`,
	`{"choices":nuLl}`,
	`{"choices":[{"delta":nuLl}]}`,
	`{"usage":{"prompt_tokens":nuLl}}`,
	`{"id":"\u00zz","choices":[]}`,
	`{"choices";[]}`,
	`{"x":{"a";1},"choices":[]}`,
}

// FuzzScanChunk: wherever scanChunk decodes a payload, encoding/json
// decodes it without error to the same chunk, from the same reused
// choices; and decodeChunk, which calls it, decodes a payload into a chunk
// that held another as encoding/json decodes it into a fresh one.
func FuzzScanChunk(f *testing.F) {
	for _, p := range append(append([]string{}, usualChunks...), oddChunks...) {
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
		held := streamChunk{Choices: []streamChoice{{FinishReason: "stale"}}, Usage: &streamUsage{9, 9}}
		held.Choices[0].Delta.Content = "stale"
		var want streamChunk
		wantErr := json.Unmarshal(payload, &want)
		gotErr := decodeChunk(payload, &held)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: decodeChunk's error %v, encoding/json's %v", payload, gotErr, wantErr)
		}
		if wantErr == nil {
			if diff := cmp.Diff(want, held, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("%q after another chunk (-encoding/json +decodeChunk):\n%s", payload, diff)
			}
		}
	})
}

// TestScanChunkTakesTheUsualChunks: the chunks providers send are decoded
// here, not left to encoding/json, so the fuzz target compares decodings.
func TestScanChunkTakesTheUsualChunks(t *testing.T) {
	t.Parallel()
	for i, p := range usualChunks {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var c streamChunk
			if !scanChunk([]byte(p), &c) {
				t.Errorf("scanChunk left %s to encoding/json", p)
			}
		})
	}
}

// TestScanChunkReadsAllOfJSON: what scanChunk skips may be JSON of many
// forms (escapes, escaped keys, numbers of every form, literals, nesting
// up to maxDepth), and reading it neither sends the payload to
// encoding/json nor decodes it otherwise.
func TestScanChunkReadsAllOfJSON(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		`{"x":"\ud83d\ude00 \u00E9\u00e9 \"\\\/\b\f\n\r\t","choices":[{"delta":{"content":"a"}}]}`,
		`{"y":[true,false,null,0,-0,12,-0.5e+3,1E-2,3.25,{"z":[[]],"k\"ey":{}}],"choices":[]}`,
		"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"\xff\"}],\"content\":\"b\"}}]}",
		"\t{ \"choices\" :\n[ { \"delta\" : { } , \"finish_reason\" : \"stop\" } ] }\r\n",
		`{"deep":` + nested(maxDepth) + `,"choices":[{"delta":{"content":"c"}}]}`,
	} {
		var got, want streamChunk
		if !scanChunk([]byte(p), &got) {
			t.Errorf("scanChunk left %.80s to encoding/json", p)
			continue
		}
		if err := json.Unmarshal([]byte(p), &want); err != nil {
			t.Fatalf("%.80s: %v", p, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%.80s (-encoding/json +scanChunk):\n%s", p, diff)
		}
	}
}

// TestScanChunkLeavesDeepNestingToEncodingJSON: a skipped value nested
// deeper than maxDepth goes to encoding/json, which decodes it, or refuses
// it past its own limit; the scanner's stack stays bounded either way.
func TestScanChunkLeavesDeepNestingToEncodingJSON(t *testing.T) {
	t.Parallel()
	deeper := []byte(`{"deep":` + nested(maxDepth+1) + `,"choices":[{"delta":{"content":"c"}}]}`)
	var c streamChunk
	if scanChunk(deeper, &c) {
		t.Errorf("scanChunk decoded a value nested %d deep; want it left to encoding/json", maxDepth+1)
	}
	if err := decodeChunk(deeper, &c); err != nil || len(c.Choices) != 1 || c.Choices[0].Delta.Content != "c" {
		t.Errorf("decodeChunk of a value nested %d deep: %+v, %v; want its content", maxDepth+1, c, err)
	}
	if err := decodeChunk([]byte(`{"deep":`+nested(10_001)+`}`), &c); err == nil {
		t.Error("decodeChunk of a value nested 10,001 deep: no error; want encoding/json's")
	}
}

// nested is n arrays, one inside the other.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// BenchmarkDecodeChunk decodes the chunks a provider streams, one after
// another into one chunk, as a stream's reader does.
func BenchmarkDecodeChunk(b *testing.B) {
	var chunk streamChunk
	payloads := make([][]byte, len(usualChunks))
	size := 0
	for i, p := range usualChunks {
		payloads[i] = []byte(p)
		size += len(p)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range payloads {
			if err := decodeChunk(p, &chunk); err != nil {
				b.Fatal(err)
			}
		}
	}
}
