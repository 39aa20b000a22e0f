package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// runSummaries checks that Summaries lists what List lists, in the same
// order and pages, without the turns: their count and the first prompt.
func runSummaries(t *testing.T, newStore func(t *testing.T) memory.Store) {
	ctx := context.Background()

	t.Run("summaries list threads without their turns", func(t *testing.T) {
		s := newStore(t)
		long := strings.Repeat("Review the parser's handling of é. ", 40)
		var want []memory.Summary
		for i, c := range []struct {
			client, tool string
			turns        []memory.Turn
			expired      bool
			prompt       string
		}{
			{tool: "chat", turns: exchange(long, "answer"), prompt: memory.Preview(long)},
			{tool: "chat", turns: append(exchange("first prompt", "answer"), exchange("later", "again")...),
				prompt: "first prompt"},
			{tool: "chat"}, // a branch has no turns of its own yet
			{tool: "debug", turns: []memory.Turn{{Role: memory.RoleAssistant, Content: "imported"},
				{Role: memory.RoleUser, Content: "second turn"}}, prompt: "second turn"},
			{tool: "chat", client: "someone-else", turns: exchange("not mine", "no")},
			{tool: "chat", turns: exchange("gone", "gone"), expired: true},
		} {
			th := newThread(c.client)
			th.ToolName, th.Turns = c.tool, c.turns
			th.UpdatedAt = base.Add(time.Duration(i) * time.Minute)
			if c.expired {
				th.ExpiresAt = base.Add(time.Minute)
			}
			if err := s.Create(ctx, th); err != nil {
				t.Fatal(err)
			}
			if c.client == "" && !c.expired {
				sum := memory.Summary{Thread: *th, TurnCount: len(c.turns), FirstPrompt: c.prompt}
				sum.Thread.Turns = nil
				want = append([]memory.Summary{sum}, want...) // newest first
			}
		}
		now := base.Add(30 * time.Minute)
		opts := cmp.Options{cmpopts.EquateApproxTime(time.Millisecond), cmpopts.EquateEmpty()}
		got, err := s.Summaries(ctx, memory.ListParams{Limit: 10}, now)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, opts); diff != "" {
			t.Errorf("summaries (-want +got):\n%s", diff)
		}
		page, err := s.Summaries(ctx, memory.ListParams{Limit: 2}, now)
		if err != nil {
			t.Fatal(err)
		}
		last := page[len(page)-1].Thread
		after := &memory.Cursor{UpdatedAt: last.UpdatedAt, ID: last.ID}
		rest, err := s.Summaries(ctx, memory.ListParams{Limit: 10, After: after}, now)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, append(page, rest...), opts); diff != "" {
			t.Errorf("two pages (-want +got):\n%s", diff)
		}
		debug, err := s.Summaries(ctx, memory.ListParams{Limit: 10, ToolName: "debug"}, now)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[:1], debug, opts); diff != "" {
			t.Errorf("tool filter (-want +got):\n%s", diff)
		}
	})

	// A thread's first turns may come after it: a branch's with its first
	// exchange, an imported thread's second with the next. Its first
	// prompt is then theirs, unless its one turn was the user's.
	t.Run("a first prompt appended is listed", func(t *testing.T) {
		s := newStore(t)
		branch := newThread("")
		imported := newThread("")
		imported.Turns = []memory.Turn{{Role: memory.RoleAssistant, Content: "an answer without its question"}}
		asked := newThread("")
		asked.Turns = []memory.Turn{{Role: memory.RoleUser, Content: "a question without its answer"}}
		for _, th := range []*memory.Thread{branch, imported, asked} {
			if err := s.Create(ctx, th); err != nil {
				t.Fatal(err)
			}
		}
		long := strings.Repeat("Why does the branch fail? ", 30)
		appended := map[string][]memory.Turn{branch.ID: exchange(long, "because"),
			imported.ID: exchange("the question after", "and its answer"),
			asked.ID:    exchange("a second question", "an answer")}
		for id, turns := range appended {
			if _, err := s.Append(ctx, id, "", memory.Exchange{}, turns, 50, base, base.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Summaries(ctx, memory.ListParams{Limit: 10}, base)
		if err != nil {
			t.Fatal(err)
		}
		prompts := map[string]string{}
		for _, sum := range got {
			prompts[sum.Thread.ID] = sum.FirstPrompt
		}
		want := map[string]string{branch.ID: memory.Preview(long), imported.ID: "the question after",
			asked.ID: "a question without its answer"}
		if diff := cmp.Diff(want, prompts); diff != "" {
			t.Errorf("first prompts (-want +got):\n%s", diff)
		}
	})
}
