package server

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/tokens"
	"google.golang.org/protobuf/types/known/structpb"
)

// The bytes a client reads are pinned here, end to end through the edge
// and the SDK: how the edge holds a schema or a reply may change, what
// goes on the wire may not.

// TestToolsListBytes: a tool's schemas reach tools/list as the executor
// gave them, keys sorted and HTML not escaped.
func TestToolsListBytes(t *testing.T) {
	t.Parallel()
	input, err := structpb.NewStruct(map[string]any{"type": "object", "required": []any{"prompt"},
		"properties": map[string]any{
			"prompt":      map[string]any{"type": "string", "description": "what to ask <the model> & why"},
			"temperature": map[string]any{"type": "number", "minimum": 0, "maximum": 1.5},
			"mode":        map[string]any{"type": "string", "enum": []any{"low", "high"}, "default": "low"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	output, err := structpb.NewStruct(map[string]any{"type": "object",
		"properties": map[string]any{"status": map[string]any{"type": "string"}}})
	if err != nil {
		t.Fatal(err)
	}
	url := edgeOver(t, &fakeRoles{tools: []*executorv1.Tool{{Name: "chat", Title: "Chat", Description: "talk",
		InputSchema: input, OutputSchema: output, RequiresModel: true, ReadOnly: true}}})
	_, raw := exchange(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	const want = `{"jsonrpc":"2.0","id":1,"result":{"ttlMs":0,"cacheScope":"public","tools":[{"annotations":` +
		`{"idempotentHint":false,"readOnlyHint":true,"title":"Chat"},` +
		`"description":"talk","inputSchema":{"properties":{"mode":{"default":"low","enum":["low","high"],` +
		`"type":"string"},"prompt":{"description":"what to ask <the model> & why","type":"string"},` +
		`"temperature":{"maximum":1.5,"minimum":0,"type":"number"}},"required":["prompt"],"type":"object"},` +
		`"name":"chat","outputSchema":{"properties":{"status":{"type":"string"}},"type":"object"},` +
		`"title":"Chat"}]}}`
	if diff := cmp.Diff(want, string(raw)); diff != "" {
		t.Errorf("tools/list (-want +got):\n%s", diff)
	}
}

// TestCallResultBytes: a reply reaches the client as the executor wrote
// it, with what the edge adds, as text and as the same structured content.
func TestCallResultBytes(t *testing.T) {
	t.Parallel()
	answer := &reply.Reply{Status: reply.StatusSuccess, Content: "<b>a & b</b>\u2028é \"q\"\n",
		ContentType: reply.Text, Fields: map[string]any{"next_steps": "x<y"},
		Metadata: reply.Metadata{ToolName: "chat", ModelUsed: "llama3.2", ProviderUsed: "custom",
			Fields: map[string]any{"usage": map[string]any{"input_tokens": 3, "cost_usd": 0.25}}}}
	url := edgeOver(t, &fakeRoles{result: &executorv1.ToolResult{Reply: answer.Encode()}})
	_, raw := exchange(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat",`+
		`"arguments":{"prompt":"hello","model":"llama3.2"}}}`)
	const text = `{\"content\":\"\\u003cb\\u003ea \\u0026 b\\u003c/b\\u003e\\u2028é \\\"q\\\"\\n\",` +
		`\"content_type\":\"text\",\"metadata\":{\"model_used\":\"llama3.2\",\"provider_used\":\"custom\",` +
		`\"tool_name\":\"chat\",\"usage\":{\"cost_usd\":0.25,\"input_tokens\":3}},\"next_steps\":\"x\\u003cy\",` +
		`\"status\":\"success\"}`
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}],` +
		`"structuredContent":` + strings.ReplaceAll(strings.ReplaceAll(text, `\\`, `\`), `\"`, `"`) + `}}`
	if diff := cmp.Diff(want, string(raw)); diff != "" {
		t.Errorf("tools/call (-want +got):\n%s", diff)
	}
}

// TestCappedResultCountsItsNotes: the output cap measures the result the
// client reads, the edge's notes on files left out included, so a capped
// answer that skipped files still fits the client's budget.
func TestCappedResultCountsItsNotes(t *testing.T) {
	t.Parallel()
	const budget = 1000 // tokens: MAX_MCP_OUTPUT_TOKENS's least
	home := t.TempDir()
	var missing []string
	for i := range 20 {
		missing = append(missing, filepath.Join(home, fmt.Sprintf("a-file-that-is-not-there-%02d.go", i)))
	}
	args, err := json.Marshal(map[string]any{"prompt": "hello", "model": "llama3.2", "absolute_file_paths": missing})
	if err != nil {
		t.Fatal(err)
	}
	long := &reply.Reply{Status: reply.StatusSuccess, Content: strings.Repeat("a long answer ", 2000),
		ContentType: reply.Text, Metadata: reply.Metadata{ToolName: "chat"}}
	schema, err := structpb.NewStruct(map[string]any{"type": "object", "properties": map[string]any{
		"prompt": map[string]any{"type": "string"}, "model": map[string]any{"type": "string"},
		"absolute_file_paths": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}})
	if err != nil {
		t.Fatal(err)
	}
	url := edgeOver(t, &fakeRoles{result: &executorv1.ToolResult{Reply: long.Encode()},
		tools: []*executorv1.Tool{{Name: "chat", InputSchema: schema, RequiresModel: true,
			FilesArgument: "absolute_file_paths"}}},
		func(c *Config) { c.MaxOutputTokens, c.Home = budget, home })
	_, raw := exchange(t, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat",`+
		`"arguments":`+string(args)+`}}`)
	var msg struct {
		Result struct{ Content []struct{ Text string } }
	}
	if err := json.Unmarshal(raw, &msg); err != nil || len(msg.Result.Content) != 1 {
		t.Fatalf("not a tool result: %s", raw)
	}
	text := msg.Result.Content[0].Text
	got, err := reply.Decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Metadata.FilesSkipped); n != len(missing) || !got.Metadata.OutputTruncated {
		t.Fatalf("%d files skipped, truncated %v; want %d and true: %s", n, got.Metadata.OutputTruncated,
			len(missing), text)
	}
	if est := tokens.Estimate(text); est > budget {
		t.Errorf("the capped result is ~%d tokens, over the budget of %d", est, budget)
	}
}
