package main

import (
	"encoding/json"
	"fmt"
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

// A thread resource's answer is bounded as it goes out, whatever the
// thread holds: an import can make a thread of 64 MiB, which went out
// whole, each '<' in it as six bytes. The newest turns are kept, and a
// second content says what was left out.
func TestAThreadResourceKeepsItsNewestTurnsThatFit(t *testing.T) {
	t.Parallel()
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	const bound = 256 << 10
	for _, tc := range []struct {
		name   string
		turns  int
		text   string // each turn's, after its number
		kept   int    // at least this many
		leftOf string // the note's words on the turns
	}{
		{"plain text", 40, strings.Repeat("x", 20_000), 10, "oldest of 40 turns"},
		{"text escaped sixfold", 10, strings.Repeat("<", 20_000), 1, "oldest of 10 turns"},
		{"one turn too large", 3, strings.Repeat("y", 1<<20), 1, "the newest turn's text after its first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := uuid.NewString()
			var line strings.Builder
			fmt.Fprintf(&line, `{"thread_id":%q,"tool_name":"chat","turns":[`, id)
			for i := range tc.turns {
				if i > 0 {
					line.WriteString(",")
				}
				fmt.Fprintf(&line, `{"role":"ROLE_USER","content":"turn %02d %s"}`, i, tc.text)
			}
			line.WriteString("]}\n")
			if code, body := request(t, "POST", st.gateway+"/v1/threads:import", "", line.String()); code != 200 {
				t.Fatalf("import: %d %s", code, body)
			}
			res, err := st.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "zen://threads/" + id})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Contents[0].Text
			if wire, _ := json.Marshal(text); len(wire) > bound {
				t.Errorf("the thread went out as %d bytes, want at most %d", len(wire), bound)
			}
			var thread struct {
				Turns []struct {
					Content string `json:"content"`
				} `json:"turns"`
			}
			if err := json.Unmarshal([]byte(text), &thread); err != nil {
				t.Fatalf("the thread's text is not JSON: %v", err)
			}
			kept := len(thread.Turns)
			if kept < tc.kept || kept >= tc.turns && tc.turns > 1 {
				t.Fatalf("%d of %d turns kept, want at least %d and not all", kept, tc.turns, tc.kept)
			}
			for i, turn := range thread.Turns {
				if want := fmt.Sprintf("turn %02d ", tc.turns-kept+i); !strings.HasPrefix(turn.Content, want) {
					t.Errorf("kept turn %d begins %.12q, want %q: the newest turns, in order", i, turn.Content, want)
				}
			}
			if len(res.Contents) != 2 || !strings.Contains(res.Contents[1].Text, tc.leftOf) ||
				!strings.Contains(res.Contents[1].Text, "/v1/threads/"+id) {
				t.Errorf("what was left out: %d contents, the second %q; want it to say %q and where the whole "+
					"thread is", len(res.Contents), lastText(res.Contents), tc.leftOf)
			}
		})
	}
}

// lastText is the text of the last of contents, if any.
func lastText(contents []*mcp.ResourceContents) string {
	if len(contents) == 0 {
		return ""
	}
	return contents[len(contents)-1].Text
}
