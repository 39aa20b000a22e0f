package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/storetest"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// chatThread is an empty chat thread, created now and an hour from expiry.
func chatThread(now time.Time) *memory.Thread {
	return &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour)}
}

// create stores th in s, failing the test when it cannot, and returns it.
func create(t *testing.T, s *Store, th *memory.Thread) *memory.Thread {
	t.Helper()
	if err := s.Create(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	return th
}

// qa is an exchange: a question and its answer.
func qa() []memory.Turn {
	return []memory.Turn{{Role: memory.RoleUser, Content: "q"}, {Role: memory.RoleAssistant, Content: "a"}}
}

// holdWriteLock has another process's connection take the file's write lock
// and keep it until the transaction it returns ends (or the test does).
func holdWriteLock(t *testing.T, path string) *sql.Tx {
	t.Helper()
	other, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	tx, err := other.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Store { return open(t, filepath.Join(t.TempDir(), "memory.db")) })
}

// TestReadsSeeOtherProcessesWrites shares one file between two stores, as
// two zen processes with one data directory do.
func TestReadsSeeOtherProcessesWrites(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (memory.Store, memory.Store) {
		path := filepath.Join(t.TempDir(), "memory.db")
		return open(t, path), open(t, path)
	})
}

func TestThreadsSurviveReopening(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	now := time.Now().UTC()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour),
		Turns: []memory.Turn{{Role: memory.RoleUser, Content: "kept"}}}
	first := open(t, path)
	if err := first.Create(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	first.Close()
	got, err := open(t, path).Get(context.Background(), th.ID, now)
	if err != nil || got.Turns[0].Content != "kept" {
		t.Fatalf("after reopening: %v %v", got, err)
	}
}

// Two stores on one file stand for two zen processes.
func TestTwoHandlesShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	a, b := open(t, path), open(t, path)
	ctx := context.Background()
	now := time.Now().UTC()
	th := chatThread(now)
	if err := a.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	for _, s := range []*Store{a, b} {
		go func() {
			for range 25 {
				turns := qa()
				if _, err := s.Append(ctx, th.ID, "", memory.Exchange{}, turns, 1000, now,
					now.Add(time.Hour)); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	got, _ := b.Get(ctx, th.ID, now)
	if len(got.Turns) != 100 {
		t.Errorf("have %d turns, want 100", len(got.Turns))
	}
}

func TestUnwritableDirectoryIsExplained(t *testing.T) {
	// Root may write anywhere, so the path goes under a regular file,
	// which fails for everyone.
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(filepath.Join(file, "memory.db"))
	if err == nil || !strings.Contains(err.Error(), "memory.db") {
		t.Errorf("err = %v, want one naming the file", err)
	}
}

func TestALockHeldTooLongIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := OpenWithTimeout(path, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	now := time.Now().UTC()
	th := create(t, s, chatThread(now))
	tx := holdWriteLock(t, path)
	if _, err := tx.ExecContext(ctx, `UPDATE threads SET tool_name = tool_name`); err != nil {
		t.Fatal(err)
	}
	q := []memory.Turn{{Role: memory.RoleUser, Content: "q"}}
	_, err = s.Append(ctx, th.ID, "", memory.Exchange{}, q, 10, now, now.Add(time.Hour))
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("append under a held lock: err = %v, want ErrUnavailable", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{}, q, 10, now, now.Add(time.Hour)); err != nil {
		t.Errorf("after the lock was released: %v", err)
	}
}

// A continued call reads the thread its previous call appended to: the
// append leaves its turns with the ones this process keeps, so that read
// reads the thread's row and no turn. The turns are rewritten in the file
// behind the store's back to show which it reads.
func TestAReadAfterAnAppendReadsNoTurns(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	s := open(t, path)
	ctx := context.Background()
	now := time.Now().UTC()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q1"}}}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, th.ID, now); err != nil {
		t.Fatal(err)
	}
	turns := []memory.Turn{{Role: memory.RoleAssistant, Content: "a1"}, {Role: memory.RoleUser, Content: "q2"}}
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, turns, 10, now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rewrite := `UPDATE turns SET body = json_set(body, '$.content', 'read from the file')`
	if _, err := raw.ExecContext(ctx, rewrite); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, th.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	var contents []string
	for _, turn := range got.Turns {
		contents = append(contents, turn.Content)
	}
	if diff := cmp.Diff([]string{"q1", "a1", "q2"}, contents); diff != "" {
		t.Errorf("turns (-kept by the append +read):\n%s", diff)
	}
}

// A write whose context ends, waiting for another process's lock or before
// it starts, stores nothing and leaves the writer free for the next one.
func TestAWriteWhoseContextEndsLeavesTheWriterFree(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	s := open(t, path)
	ctx := context.Background()
	now := time.Now().UTC()
	th := create(t, s, chatThread(now))
	appendTo := func(ctx context.Context, content string) error {
		_, err := s.Append(ctx, th.ID, "", memory.Exchange{}, []memory.Turn{{Role: memory.RoleUser,
			Content: content}}, 10, now,
			now.Add(time.Hour))
		return err
	}
	tx := holdWriteLock(t, path)
	waiting, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if err := appendTo(waiting, "while locked"); err == nil {
		t.Error("an append whose context ended while it waited for the lock succeeded")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	ended, end := context.WithCancel(ctx)
	end()
	if err := appendTo(ended, "too late"); err == nil {
		t.Error("an append with an ended context succeeded")
	}
	if err := appendTo(ctx, "kept"); err != nil {
		t.Fatalf("the append after them: %v", err)
	}
	got, err := s.Get(ctx, th.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Turns) != 1 || got.Turns[0].Content != "kept" {
		t.Errorf("turns: %+v, want only the last append's", got.Turns)
	}
}

// An append keeps its exchange id on its first turn's row: a table of
// exchanges apart cost every append its own B-tree's pages in the WAL (1.5
// of its 7.7 frames, measured).
func TestAnExchangeIsKeptWithItsTurns(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	th := create(t, s, chatThread(now))
	turns := qa()
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, turns, 10, now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var apart int
	if err := s.wc.QueryRowContext(ctx, `SELECT count(*) FROM exchanges`).Scan(&apart); err != nil || apart != 0 {
		t.Errorf("exchanges recorded apart: %d, %v; want none", apart, err)
	}
	rows, err := s.wc.QueryContext(ctx, `SELECT exchange_id FROM turns WHERE thread_id = ? ORDER BY seq`, th.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if diff := cmp.Diff([]string{"x-1", ""}, ids); diff != "" {
		t.Errorf("the turns' exchange ids (-want +got):\n%s", diff)
	}
}

// TestTheFilesAreTheirOwnersAlone: the database and its WAL and shared
// memory files are readable by zen's user alone, in a directory anyone may
// read (one an operator made, a mounted volume), and so are the files of
// an older release that were not.
func TestTheFilesAreTheirOwnersAlone(t *testing.T) {
	t.Parallel()
	for _, older := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "zen-data")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "memory.db")
		if older {
			for _, name := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.WriteFile(name, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		s := open(t, path)
		now := time.Now().UTC()
		th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleUser, Content: "private"}}}
		if err := s.Create(context.Background(), th); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{path, path + "-wal", path + "-shm"} {
			info, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if perm := info.Mode().Perm(); perm&0o077 != 0 {
				t.Errorf("older files %v: %s is %v, want no access for others", older, filepath.Base(name), perm)
			}
		}
	}
}

// TestFilesAnotherUserMayReadAreRefused: a database that is a link to a
// file elsewhere, or that another user owns, is refused at open, saying
// what to do: its owner, or the link's, could read every thread.
func TestFilesAnotherUserMayReadAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	elsewhere := filepath.Join(t.TempDir(), "loot.db")
	if err := os.WriteFile(elsewhere, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(dir, "memory.db")
	if err := os.Symlink(elsewhere, linked); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(linked); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		if s != nil {
			s.Close()
		}
		t.Errorf("a database that is a link: err = %v, want it refused", err)
	}
	if os.Getuid() != 0 {
		return // only root can give a file to another user
	}
	owned := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(owned, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(owned, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(owned); err == nil || !strings.Contains(err.Error(), "belongs to user 65534") {
		if s != nil {
			s.Close()
		}
		t.Errorf("a database another user owns: err = %v, want it refused", err)
	}
}

// A turn is stored as its text reads: encoding/json's HTML escapes made a
// turn of '<' six times its size in the file.
func TestMarkupIsStoredAsItIs(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	th := chatThread(now)
	content := strings.Repeat("<", 6000)
	th.Turns = []memory.Turn{{Role: memory.RoleUser, Content: content}}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	var stored int
	if err := s.wc.QueryRowContext(ctx, `SELECT length(body) FROM turns WHERE thread_id = ?`, th.ID).Scan(
		&stored); err != nil {
		t.Fatal(err)
	}
	if stored > len(content)+200 {
		t.Errorf("a turn of %d bytes of markup is stored as %d bytes", len(content), stored)
	}
}

// An append rewrites its thread's row, and with it whatever the row
// holds: a thread's initial context (the first call's arguments, up to
// 2 MB) kept in the row made every append to it cost as much again (a
// 512 KiB one: 130 more WAL frames, four times the CPU). One past
// inlineContext is kept in a table of its own.
func TestAnAppendDoesNotRewriteALargeInitialContext(t *testing.T) {
	t.Parallel()
	frames := func(initial string) int {
		s := open(t, filepath.Join(t.TempDir(), "memory.db"))
		ctx := context.Background()
		now := time.Now().UTC()
		th := chatThread(now)
		th.InitialContext = map[string]any{"prompt": initial}
		create(t, s, th)
		var busy, log, done int
		if err := s.wc.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &log, &done); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := s.Append(ctx, th.ID, "", memory.Exchange{}, qa(), 10, now, now.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.wc.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, th.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(th.InitialContext, got.InitialContext); diff != "" {
			t.Errorf("the initial context read back (-want +got):\n%s", diff)
		}
		return log
	}
	small, large := frames("review"), frames(strings.Repeat("x", 512<<10))
	if large > small+2 {
		t.Errorf("three appends wrote %d WAL frames to a thread with a 512 KiB initial context, %d with a small one; "+
			"want about as many", large, small)
	}
}

// A read within a weight reads no turn of a heavier thread on a reader
// too, where it goes while a write holds the writer's connection.
func TestAHeavierThreadIsReadByItsHeadOnAReader(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	th := chatThread(now)
	th.Turns, th.Weight = qa(), 500
	create(t, s, th)
	s.writer <- struct{}{} // a write holds the writer's connection
	defer func() { <-s.writer }()
	for _, max := range []int64{499, 500} {
		got, heavier, err := s.GetWithin(ctx, th.ID, now, max)
		if err != nil || heavier != (max < 500) || (len(got.Turns) == 0) != heavier {
			t.Errorf("within %d on a reader: %d turns, heavier %v, %v; want the head alone past 500", max,
				len(got.Turns), heavier, err)
		}
	}
}
