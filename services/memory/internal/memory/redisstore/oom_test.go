package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// A Redis with a maxmemory and the noeviction policy refuses, once full, a
// script whose first write could grow it; after a first write that cannot
// (DEL), it lets every later one through, so as not to leave the script
// half done. Memory's writes must meet the refusal first: a thread created
// or imported into a full Redis is refused whole, and the thread an import
// would replace stays as it was. Such a Redis also refuses every command
// of a transaction (MULTI), reads too; threads must still read and list.
func TestAFullRedisRefusesWritesWholeAndStillReads(t *testing.T) {
	t.Parallel()
	srv := redistest.StartWith(t, append(slices.Clone(redistest.NoPersistence),
		"--maxmemory", "4mb", "--maxmemory-policy", "noeviction")...)
	s := open(t, srv)
	ctx := context.Background()
	now := time.Now()
	thread := func(id, said string) *memory.Thread {
		return &memory.Thread{ID: id, ToolName: "chat", ClientID: "me", CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{
				{Role: memory.RoleUser, Content: said,
					Files: []memory.FileRef{{Path: "/a.go", SHA256: strings.Repeat("a", 64)}}},
				{Role: memory.RoleAssistant, Content: said + ", answered"}}}
	}
	kept := thread(uuid.NewString(), "kept")
	if err := s.Create(ctx, kept); err != nil {
		t.Fatal(err)
	}
	fillRedis(t, s)

	fresh := thread(uuid.NewString(), "fresh")
	if err := s.Create(ctx, fresh); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("create in a full Redis: %v, want ErrUnavailable", err)
	}
	if _, err := s.Get(ctx, fresh.ID, now); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("the thread a full Redis refused reads as %v, want ErrNotFound", err)
	}
	if err := s.Import(ctx, []*memory.Thread{thread(kept.ID, "replaced")}, true); !errors.Is(err,
		memory.ErrUnavailable) {
		t.Errorf("import over a thread in a full Redis: %v, want ErrUnavailable", err)
	}
	if _, err := s.Append(ctx, kept.ID, "me", memory.Exchange{ID: "x-1"}, []memory.Turn{
		{Role: memory.RoleUser, Content: "more"}, {Role: memory.RoleAssistant, Content: "more, answered"}},
		10, now, now.Add(time.Hour)); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("append in a full Redis: %v, want ErrUnavailable", err)
	}
	listed, err := s.List(ctx, memory.ListParams{ClientID: "me", Limit: 10}, now)
	if err != nil || len(listed) != 1 || listed[0].ID != kept.ID {
		t.Errorf("list the client's threads in a full Redis = %d threads, %v; want the one it holds", len(listed), err)
	}
	// The store that wrote it keeps its turns; another reads them from Redis.
	for name, reader := range map[string]*Store{"the writer": s, "another store": open(t, srv)} {
		got, err := reader.Get(ctx, kept.ID, now)
		if err != nil {
			t.Fatalf("%s reads the thread a full Redis holds: %v", name, err)
		}
		var said []string
		for _, turn := range got.Turns {
			said = append(said, turn.Content)
		}
		if diff := cmp.Diff([]string{"kept", "kept, answered"}, said); diff != "" {
			t.Errorf("%s reads the thread a full Redis refused an import and an append of (-want +got):\n%s",
				name, diff)
		}
	}
	files, err := s.rdb.SMembers(ctx, s.filesKey(kept.ID)).Result()
	if err != nil || len(files) != 1 {
		t.Errorf("its files = %q, %v; want the one it had", files, err)
	}
}

// fillRedis writes keys of its own until Redis refuses even a small one
// for memory: a large one is refused while its own arguments take the
// memory that tips Redis over, and once they are freed Redis has room
// again.
func fillRedis(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	size := 64 << 10
	for i := range 10_000 {
		err := s.rdb.Set(ctx, fmt.Sprint("filler:", i), strings.Repeat("x", size), 0).Err()
		switch {
		case err != nil && !strings.Contains(err.Error(), "OOM"):
			t.Fatal(err)
		case err != nil && size <= 16:
			return
		case err != nil:
			size /= 4
		}
	}
	t.Fatal("Redis went on taking keys under a maxmemory of 4 MB")
}
