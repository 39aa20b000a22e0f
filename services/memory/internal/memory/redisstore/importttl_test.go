package redisstore

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// An imported thread's keys live from the import for the conversation's
// lifetime, whatever last_updated_at the export gave it: one from a clock
// ahead of this one was gone as soon as it was imported, and one from a
// month-old export kept its keys a month past its expiry.
func TestImportedThreadsKeysLiveFromTheImport(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := t.Context()
	s, err := Open(srv.URL(), "imported:", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer raw.Close()
	const lifetime = time.Hour
	svc := memory.NewService(s, lifetime, 50)
	now := time.Now()
	turns := []memory.Turn{{Role: memory.RoleUser, Content: "q"}, {Role: memory.RoleAssistant, Content: "a"}}
	ahead := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now.Add(2 * time.Hour),
		Turns: turns}
	old := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now.Add(-720 * time.Hour),
		UpdatedAt: now.Add(-720 * time.Hour), Turns: turns}
	if n, err := svc.Import(ctx, "", []*memory.Thread{ahead, old}, false); err != nil || n != 2 {
		t.Fatalf("import: %d, %v", n, err)
	}
	for name, th := range map[string]*memory.Thread{"from a clock ahead": ahead, "from a month-old export": old} {
		left := raw.PTTL(ctx, s.metaKey(th.ID)).Val()
		if left < lifetime-time.Minute || left > lifetime {
			t.Errorf("a thread %s: its keys live %v more, want the conversation's %v", name, left, lifetime)
		}
		got, err := s.Get(ctx, th.ID, time.Now())
		if err != nil {
			t.Errorf("a thread %s, imported a moment ago: %v", name, err)
		} else if got.UpdatedAt.After(time.Now()) {
			t.Errorf("a thread %s was last updated at %v, ahead of this clock", name, got.UpdatedAt)
		}
	}
}
