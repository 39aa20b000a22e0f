package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// upstreamDefaultDisabled is what the upstream's shipped .env disables.
const upstreamDefaultDisabled = "analyze,refactor,testgen,secaudit,docgen,tracer"

// toolsListBytes is the size of a tools/list result as a client receives it.
func toolsListBytes(t *testing.T, cs *mcp.ClientSession) (int, []string) {
	t.Helper()
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return len(raw), names
}

// maxToolList is what tools/list may weigh with every tool on: the 31 KB
// the upstream needs for its default set of 12 (it needs 59 KB for all 18).
// The agent loads it into its context before any call.
const maxToolList = 31_000

// TestToolListStaysLean holds tools/list with all 18 tools to maxToolList,
// in auto mode, where the model descriptions are longest.
func TestToolListStaysLean(t *testing.T) {
	fake := fakemodel.New(t)
	all, names := toolsListBytes(t, serveStack(t, fakeEnv(fake)).session)
	if strings.Join(names, ",") != strings.Join(toolOrder, ",") {
		t.Errorf("tools/list order = %v", names)
	}
	def, _ := toolsListBytes(t, serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"DISABLED_TOOLS": upstreamDefaultDisabled})).session)
	t.Logf("tools/list: %d bytes with all 18 tools, %d bytes with the default set", all, def)
	if all > maxToolList {
		t.Errorf("tools/list is %d bytes with all 18 tools; at most %d (the upstream needs that for its default 12)",
			all, maxToolList)
	}
}

func TestDisabledTools(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"DISABLED_TOOLS": " Analyze, tracer ,version,no-such-tool"}))
	_, names := toolsListBytes(t, st.session)
	if slices.Contains(names, "analyze") || slices.Contains(names, "tracer") || !slices.Contains(names, "version") || len(names) != 16 {
		t.Errorf("tools = %v: analyze and tracer off, version kept (it cannot be disabled)", names)
	}
	_, err := st.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "analyze", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "analyze") {
		t.Errorf("calling a disabled tool: %v, want an unknown-tool error", err)
	}
	prompts, err := st.session.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var pn []string
	for _, p := range prompts.Prompts {
		pn = append(pn, p.Name)
	}
	if slices.Contains(pn, "analyze") || !slices.Contains(pn, "thinkdeeper") || !slices.Contains(pn, "review") || !slices.Contains(pn, "continue") {
		t.Errorf("prompts = %v", pn)
	}
	got, err := st.session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "thinkdeeper", Arguments: map[string]string{"model": "o3"}})
	if err != nil {
		t.Fatal(err)
	}
	msg := got.Messages[0].Content.(*mcp.TextContent).Text
	if !strings.Contains(msg, "thinkdeep") || !strings.Contains(msg, "o3") || strings.Contains(msg, "thinking mode") {
		t.Errorf("thinkdeeper prompt = %q", msg)
	}
	got, err = st.session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "continue"})
	if err != nil || !strings.Contains(got.Messages[0].Content.(*mcp.TextContent).Text, "continuation_id") {
		t.Errorf("continue prompt = %v, %v", got, err)
	}
}
