package redisstore

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// An append whose keep-alive of the thread's files fails, after its
// script stored the turns, leaves the files to be kept alive by the next
// append: the script's record that they are kept must not outlive the
// failure.
func TestFilesAFailedKeepAliveMissedAreKeptByTheNextAppend(t *testing.T) {
	t.Parallel()
	mr, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	file := memory.Blob{SHA256: "f1", Content: "package f\n"}
	if err := s.SaveBlobs(ctx, []memory.Blob{file}, now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", ClientID: "me", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q",
			Files: []memory.FileRef{{Path: "/f", SHA256: "f1"}}}}}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	answer := []memory.Turn{{Role: memory.RoleAssistant, Content: "a"}}
	// The blob's key of the wrong type fails the keep-alive's script.
	blobKey := s.blobKey("f1")
	mr.Del(blobKey)
	if err := mr.Set(blobKey, "not a hash"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: "x-1"}, answer, 10, now,
		now.Add(time.Hour)); err == nil {
		t.Fatal("the append whose keep-alive failed succeeded: its retry is what redoes the keep-alive")
	}
	mr.Del(blobKey)
	if err := s.SaveBlobs(ctx, []memory.Blob{file}, now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	later := now.Add(5 * time.Minute)
	if _, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: "x-2"}, answer, 10, later,
		later.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, want := blobKeptUntil(t, mr, blobKey), later.Add(time.Hour); got.Before(want) {
		t.Errorf("the file is kept until %v, before its thread's expiry %v", got, want)
	}
}

// A thread an import replaces starts with no record that its files are
// kept (files_ms): the record was the old thread's, of the old thread's
// files, and would let the next append skip keeping the new ones alive.
func TestAReplacedThreadsFilesAreKeptByItsNextAppend(t *testing.T) {
	t.Parallel()
	mr, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	old, replacing := fileThread("t-1", "q", "old.go", now), fileThread("t-1", "q", "new.go", now)
	newSHA := replacing.Turns[0].Files[0].SHA256
	blobs := []memory.Blob{{SHA256: old.Turns[0].Files[0].SHA256, Content: "package old\n"},
		{SHA256: newSHA, Content: "package new\n"}}
	if err := s.SaveBlobs(ctx, blobs, now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	answer := []memory.Turn{{Role: memory.RoleAssistant, Content: "a"}}
	if err := s.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	// This append keeps the old file a quarter hour past the thread, and records it.
	if _, err := s.Append(ctx, "t-1", "me", memory.Exchange{ID: "x-1"}, answer, 10, now,
		now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Import(ctx, []*memory.Thread{replacing}, true, now); err != nil {
		t.Fatal(err)
	}
	later := now.Add(5 * time.Minute)
	if _, err := s.Append(ctx, "t-1", "me", memory.Exchange{ID: "x-2"}, answer, 10, later,
		later.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, want := blobKeptUntil(t, mr, s.blobKey(newSHA)), later.Add(time.Hour); got.Before(want) {
		t.Errorf("the replacing thread's file is kept until %v, before the thread's expiry %v", got, want)
	}
}

// blobKeptUntil is when the file's content at key expires, as the store
// recorded it.
func blobKeptUntil(t *testing.T, mr *miniredis.Miniredis, key string) time.Time {
	t.Helper()
	ms, err := strconv.ParseInt(mr.HGet(key, "expires_ms"), 10, 64)
	if err != nil {
		t.Fatalf("%s's expires_ms: %v", key, err)
	}
	return time.UnixMilli(ms)
}
