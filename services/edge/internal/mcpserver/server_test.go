package mcpserver

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/edge/internal/call"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestToolsAreListedInTheExecutorsOrder(t *testing.T) {
	schema, _ := structpb.NewStruct(map[string]any{"type": "object", "properties": map[string]any{}})
	var tools []*call.Tool
	for _, name := range []string{"chat", "thinkdeep", "codereview", "apilookup", "version"} {
		tool, err := call.NewTool(&executorv1.Tool{Name: name, InputSchema: schema})
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool)
	}
	logger := slog.New(slog.DiscardHandler)
	runner := call.NewRunner(call.Backends{}, tools, files.Policy{}, 25_000, logger)
	server := New(tools, runner, Options{Name: "zen", Version: "test", Logger: logger})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "chat,thinkdeep,codereview,apilookup,version" {
		t.Errorf("tools/list order = %s", got)
	}
}
