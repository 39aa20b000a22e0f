package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestThreadResourcesFindLostConversations(t *testing.T) {
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	first := startChat(t, st, "the caching question")
	second := startChat(t, st, "the logging question")
	ctx := t.Context()

	resources, err := st.session.ListResources(ctx, nil)
	if err != nil || len(resources.Resources) != 1 || resources.Resources[0].URI != "zen://threads" {
		t.Fatalf("resources = %+v, %v", resources, err)
	}
	templates, err := st.session.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "zen://threads/{thread_id}" {
		t.Fatalf("templates = %+v, %v", templates, err)
	}

	res, err := st.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "zen://threads"})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Threads []struct {
			ContinuationID string `json:"continuation_id"`
			Tool           string `json:"tool"`
			FirstPrompt    string `json:"first_prompt"`
		} `json:"threads"`
	}
	raw := res.Contents[0].Text
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Threads) != 2 || list.Threads[0].ContinuationID != second || list.Threads[1].FirstPrompt != "the caching question" || list.Threads[0].Tool != "chat" {
		t.Errorf("zen://threads = %s", raw)
	}

	one, err := st.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "zen://threads/" + first})
	if err != nil {
		t.Fatal(err)
	}
	var thread struct {
		ThreadID string           `json:"thread_id"`
		Turns    []map[string]any `json:"turns"`
	}
	if err := json.Unmarshal([]byte(one.Contents[0].Text), &thread); err != nil || thread.ThreadID != first || len(thread.Turns) != 2 {
		t.Errorf("zen://threads/%s = %s (%v)", first, one.Contents[0].Text, err)
	}
	if _, err := st.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "zen://threads/" + uuid.NewString()}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("an unknown thread: err = %v", err)
	}
}
