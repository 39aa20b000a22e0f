package redisstore

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// Redis's Lua passes at most about 8,000 values to one command from a
// table (unpack), while a thread may hold up to MAX_CONVERSATION_TURNS
// (10,000) turns and one write reference up to memory.MaxFilesPerWrite
// files. Writes past that must be stored whole, in order, not fail part
// way through their script. miniredis's Lua has the same limit.
func TestWritesLargerThanOneUnpackAreStoredWhole(t *testing.T) {
	t.Parallel()
	for name, openStore := range map[string]func(t *testing.T) *Store{
		// miniredis's Lua runs these scripts in seconds on a loaded machine,
		// past go-redis's 3 s read timeout (make test runs every package at
		// once): give it a minute.
		"miniredis": func(t *testing.T) *Store {
			s := New(redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr(), ReadTimeout: time.Minute}), "",
				false)
			t.Cleanup(func() { s.Close() })
			return s
		},
		"redis-server": func(t *testing.T) *Store { return open(t, redistest.Start(t)) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			writeLarge(t, openStore(t))
		})
	}
}

func writeLarge(t *testing.T, s *Store) {
	ctx := context.Background()
	now := time.Now()
	const many = 9_000
	turnsFrom := func(first, n int, files []memory.FileRef) []memory.Turn {
		turns := make([]memory.Turn, n)
		for i := range turns {
			turns[i] = memory.Turn{Role: memory.RoleUser, Content: fmt.Sprint("q", first+i)}
		}
		turns[0].Files = files
		return turns
	}
	filesFrom := func(first int) ([]memory.FileRef, []string) {
		refs := make([]memory.FileRef, memory.MaxFilesPerWrite)
		shas := make([]string, len(refs))
		for i := range refs {
			shas[i] = fmt.Sprintf("%064x", first+i)
			refs[i] = memory.FileRef{Path: fmt.Sprint("/src/f", first+i), SHA256: shas[i]}
		}
		return refs, shas
	}
	createdFiles, createdSHAs := filesFrom(0)
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", ClientID: "me", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: turnsFrom(0, many, createdFiles)}
	if err := s.Create(ctx, th); err != nil {
		t.Fatalf("create a thread of %d turns and %d files: %v", many, len(createdFiles), err)
	}
	appendedFiles, appendedSHAs := filesFrom(len(createdFiles))
	if n, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: "x-1"}, turnsFrom(many, many, appendedFiles),
		3*many, now, now.Add(time.Hour)); err != nil || n != 2*many {
		t.Fatalf("append %d turns and %d files = %d, %v; want %d, nil", many, len(appendedFiles), n, err, 2*many)
	}
	got, err := s.Get(ctx, th.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	var want, read []string
	for i := range 2 * many {
		want = append(want, fmt.Sprint("q", i))
	}
	for _, turn := range got.Turns {
		read = append(read, turn.Content)
	}
	if diff := cmp.Diff(want, read); diff != "" {
		t.Errorf("the thread's turns (-want +got):\n%s", diff)
	}
	stored, err := s.rdb.SMembers(ctx, s.filesKey(th.ID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(stored)
	if diff := cmp.Diff(slices.Sorted(slices.Values(append(createdSHAs, appendedSHAs...))), stored); diff != "" {
		t.Errorf("the thread's files (-want +got):\n%s", diff)
	}
}
