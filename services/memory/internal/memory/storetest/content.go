package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// runContent checks that turns and files come back as they were written,
// and that a thread's files live as long as the thread over a conversation
// of many appends, including files that join it late: stores may skip
// keeping files alive on most appends, never so that one expires while its
// thread lives.
func runContent(t *testing.T, newStore func(t *testing.T) memory.Store) {
	ctx := context.Background()

	t.Run("any text comes back as it was written", func(t *testing.T) {
		s := newStore(t)
		th := newThread("")
		// JSON escapes, a NUL, a line separator, emoji, text that looks like
		// JSON, and empty text.
		odd := []string{"a \"quote\", a \\ and <html> & more\n\ttabbed", "nul\x00inside", "line\u2028sep 😀 é",
			`{"content":"not a turn"}`, ""}
		for _, text := range odd {
			th.Turns = append(th.Turns, memory.Turn{Role: memory.RoleUser, Content: text})
		}
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, th.ID, "", memory.Exchange{}, exchange(odd[0], odd[1]), 100, base,
			base.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		want := append(odd, odd[0], odd[1])
		if diff := cmp.Diff(want, contents(t, s, th.ID)); diff != "" {
			t.Errorf("turns changed on the way (-written +read):\n%s", diff)
		}
	})

	t.Run("files live as long as their thread through many appends", func(t *testing.T) {
		s := newStore(t)
		first := memory.Blob{SHA256: "f1", Content: "package one\n"}
		late := memory.Blob{SHA256: "f2", Content: "package two\n"}
		if err := s.SaveBlobs(ctx, []memory.Blob{first}, base, base.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		th := newThread("")
		th.Turns = []memory.Turn{{Role: memory.RoleUser, Content: "q", Files: []memory.FileRef{{Path: "/1", SHA256: "f1"}}}}
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		// An exchange every 2 minutes for three hours, each keeping the
		// thread an hour; the second file joins at 2h, between the appends
		// that keep the first one.
		for at := 2 * time.Minute; at <= 3*time.Hour; at += 2 * time.Minute {
			now := base.Add(at)
			turns := exchange("q", "a")
			if at == 2*time.Hour {
				if err := s.SaveBlobs(ctx, []memory.Blob{late}, now, now.Add(time.Hour)); err != nil {
					t.Fatal(err)
				}
				turns[0].Files = []memory.FileRef{{Path: "/2", SHA256: "f2"}}
			}
			if _, err := s.Append(ctx, th.ID, "", memory.Exchange{}, turns, 1000, now, now.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			// Just before the thread expires, both files are there.
			got, err := s.GetBlobs(ctx, []string{"f1", "f2"}, now.Add(time.Hour-time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := got["f1"]; !ok {
				t.Fatalf("after the append at %v, the first file expires before its thread", at)
			}
			if _, ok := got["f2"]; !ok && at >= 2*time.Hour {
				t.Fatalf("after the append at %v, the late file expires before its thread", at)
			}
		}
	})
}
