package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// Redis's Lua passes at most about 8,000 values to one command from a
// table (unpack), while a thread may hold up to MAX_CONVERSATION_TURNS
// (10,000) turns and an exchange reference thousands of files. A write
// past that must be stored whole, not fail part way through its script.
func TestAThreadOrAnAppendLargerThanOneUnpackIsStoredWhole(t *testing.T) {
	t.Parallel()
	s := open(t, redistest.Start(t))
	ctx := context.Background()
	now := time.Now()
	const many = 9_000
	turns := make([]memory.Turn, many)
	for i := range turns {
		turns[i] = memory.Turn{Role: memory.RoleUser, Content: fmt.Sprint("q", i)}
	}
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", ClientID: "me", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: turns}
	if err := s.Create(ctx, th); err != nil {
		t.Fatalf("create a thread of %d turns: %v", many, err)
	}
	files := make([]memory.FileRef, many)
	for i := range files {
		files[i] = memory.FileRef{Path: fmt.Sprint("/src/f", i), SHA256: fmt.Sprint("sha", i)}
	}
	question := []memory.Turn{{Role: memory.RoleUser, Content: "q", Files: files}}
	if n, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: "x-1"}, question, 10_000, now,
		now.Add(time.Hour)); err != nil || n != many+1 {
		t.Fatalf("append a turn of %d files = %d, %v; want %d, nil", many, n, err, many+1)
	}
	got, err := s.Get(ctx, th.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Turns) != many+1 || got.Turns[many-1].Content != fmt.Sprint("q", many-1) {
		t.Errorf("the thread reads back %d turns, want %d in order", len(got.Turns), many+1)
	}
	if n, err := s.rdb.SCard(ctx, s.filesKey(th.ID)).Result(); err != nil || n != many {
		t.Errorf("the thread's files: %d, %v; want %d", n, err, many)
	}
}
