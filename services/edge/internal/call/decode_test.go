package call

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

func chatLikeTool(t testing.TB) *Tool {
	schema, err := structpb.NewStruct(map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"prompt", "model"},
		"properties": map[string]any{
			"prompt":              map[string]any{"type": "string"},
			"model":               map[string]any{"type": "string"},
			"temperature":         map[string]any{"type": "number", "minimum": 0, "maximum": 1},
			"thinking_mode":       map[string]any{"type": "string", "enum": []any{"low", "high"}},
			"absolute_file_paths": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := NewTool(&executorv1.Tool{Name: "chat", InputSchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestDecode(t *testing.T) {
	tool := chatLikeTool(t)
	tests := []struct {
		raw, wantErr string
	}{
		{`{"prompt":"hi"}`, ""}, // model may be left out: continuations inherit it
		{`{"prompt":"hi","temperature":0.5,"absolute_file_paths":["/a"]}`, ""},
		{`null`, "missing properties"},
		{`[]`, "must be a JSON object"},
		{`"hi"`, "must be a JSON object"},
		{`{"prompt":3}`, "prompt: type"},
		{`{"prompt":"hi","temperature":7}`, "temperature"},
		{`{"prompt":"hi","thinking_mode":"huge"}`, "thinking_mode"},
		{`{"prompt":"hi","colour":"red"}`, "colour"},
		{`{"prompt":"hi","absolute_file_paths":"/a"}`, ""}, // one path, as a list of one
		{`{"prompt":"hi","absolute_file_paths":3}`, "absolute_file_paths"},
		{`{"prompt":"hi","absolute_file_paths":{"a":1}}`, "absolute_file_paths"},
	}
	for _, tt := range tests {
		_, out := tool.Decode(json.RawMessage(tt.raw))
		switch {
		case tt.wantErr == "" && out != nil:
			t.Errorf("%s: %+v", tt.raw, out.Reply)
		case tt.wantErr != "" && (out == nil || !out.IsError || !strings.Contains(out.Reply.Content, tt.wantErr)):
			t.Errorf("%s: %+v, want an error containing %q", tt.raw, out, tt.wantErr)
		}
	}
}

// TestAListSentAsAStringIsTheListItNames: a list of strings sent as one
// string is that string alone, or the list it holds in JSON.
func TestAListSentAsAStringIsTheListItNames(t *testing.T) {
	t.Parallel()
	tool := chatLikeTool(t)
	for raw, want := range map[string][]any{
		`{"prompt":"hi","absolute_file_paths":"/a"}`:               {"/a"},
		`{"prompt":"hi","absolute_file_paths":"[\"/a\", \"/b\"]"}`: {"/a", "/b"},
		`{"prompt":"hi","absolute_file_paths":"[/a"}`:              {"[/a"},
		`{"prompt":"hi","absolute_file_paths":"[1, 2]"}`:           {"[1, 2]"},
		`{"prompt":"hi","absolute_file_paths":"[]"}`:               {},
		`{"prompt":"hi","absolute_file_paths":""}`:                 {}, // "none", as clients send it
		`{"prompt":"hi","absolute_file_paths":"  "}`:               {},
	} {
		args, out := tool.Decode(json.RawMessage(raw))
		if out != nil {
			t.Errorf("%s: %+v", raw, out.Reply)
			continue
		}
		if diff := cmp.Diff(want, args["absolute_file_paths"]); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", raw, diff)
		}
	}
}

// FuzzDecode feeds arbitrary bytes as tool arguments: every input must
// decode to validated arguments or to a tool error, never a panic.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`{"prompt":"hi"}`, `{}`, `null`, `[]`, `{"prompt":{"nested":[1,2,{}]}}`,
		`{"prompt":"\u0000\ud800"}`, `{"temperature":1e400}`, `{"prompt":"` + strings.Repeat("x", 10_000) + `"}`, `{`, ``} {
		f.Add([]byte(seed))
	}
	tool := chatLikeTool(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, out := tool.Decode(raw)
		if (args == nil) == (out == nil) {
			t.Fatalf("Decode(%q) gave args %v and outcome %v: want exactly one", raw, args, out)
		}
		if out != nil && (!out.IsError || out.Reply.Status != "error") {
			t.Fatalf("Decode(%q) outcome %+v is not a tool error", raw, out)
		}
	})
}

// A refusal quotes a little of what the call sent, never all of it: the
// validator names every unexpected property, and 300,000 of them made an
// answer of 8 MB.
func TestARefusalQuotesLittleOfTheCall(t *testing.T) {
	t.Parallel()
	tool := chatLikeTool(t)
	var raw strings.Builder
	raw.WriteString(`{"prompt":"hi"`)
	for i := range 20_000 {
		fmt.Fprintf(&raw, `,"unexpected_%d":1`, i)
	}
	raw.WriteString("}")
	_, out := tool.Decode(json.RawMessage(raw.String()))
	if out == nil || !out.IsError || len(out.Reply.Content) > 4<<10 ||
		!strings.Contains(out.Reply.Content, "unexpected_") || !strings.Contains(out.Reply.Content, "more bytes") {
		t.Errorf("Decode of 20,000 unexpected properties: %d bytes of refusal; want at most 4 KiB naming some "+
			"and saying it was cut", len(out.Reply.Content))
	}
}
