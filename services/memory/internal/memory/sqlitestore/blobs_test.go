package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// largeFiles stores n files of size bytes each, named by a thread's first
// turn, and returns their hashes.
func largeFiles(t *testing.T, s *Store, th *memory.Thread, n, size int, now time.Time) []string {
	t.Helper()
	var blobs []memory.Blob
	var shas []string
	for i := range n {
		sha := fmt.Sprintf("%064x", i+1)
		shas = append(shas, sha)
		blobs = append(blobs, memory.Blob{SHA256: sha, Content: strings.Repeat(strconv.Itoa(i), size),
			Tokens: map[string]int64{"o200k_base": int64(size / 4)}})
		th.Turns[0].Files = append(th.Turns[0].Files, memory.FileRef{Path: "/f" + strconv.Itoa(i), SHA256: sha})
	}
	if err := s.SaveBlobs(context.Background(), blobs, now, th.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	return shas
}

// A blob's head is read without its content: only its size and counts.
// Stored after the content in the same row, they took reading all of it
// (SQLite walks a large value's pages to the end to reach what follows).
// Not parallel: it counts what the whole process reads.
func TestABlobsHeadIsReadWithoutItsContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := open(t, path)
	now := time.Now().UTC()
	th := chatThread(now)
	th.Turns = qa()
	shas := largeFiles(t, s, th, 16, 512<<10, now)
	create(t, s, th)
	s.Close()
	s = open(t, path) // nothing of the files in its cache
	// rchar: every read and pread, whether the kernel had the data cached or not.
	before := procIO(t, "rchar")
	heads, err := s.BlobHeads(context.Background(), shas, now)
	read := procIO(t, "rchar") - before
	if err != nil || len(heads) != len(shas) || heads[shas[0]].Bytes != 512<<10 {
		t.Fatalf("heads %v, %v; want %d of 512 KiB", heads, err, len(shas))
	}
	if read > 1<<20 {
		t.Errorf("reading the heads of 16 files of 512 KiB read %d KiB; want less than their content", read>>10)
	}
}

// A file an older version wrote holds its blobs' content in their rows,
// before their counts and expiry: opened, it moves the content out and
// records its length, once (user_version), so that a selection weighs
// such a blob without reading it.
func TestAnOlderFilesBlobsMoveOut(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	old := fmt.Sprintf("%064x", 1)
	if _, err := db.Exec(`CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, content TEXT NOT NULL,
		tokens TEXT NOT NULL DEFAULT '{}', expires_at INTEGER NOT NULL) WITHOUT ROWID`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO blobs (sha256, content, tokens, expires_at)
		VALUES (?, 'package héllo', '{"o200k_base":2}', ?)`, old, nanos(now.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s := open(t, path)
	ctx := context.Background()
	counts := map[string]int64{"o200k_base": 2}
	blobs, err := s.GetBlobs(ctx, []string{old}, now)
	if diff := cmp.Diff(map[string]memory.Blob{old: {SHA256: old, Content: "package héllo", Tokens: counts}},
		blobs); diff != "" || err != nil {
		t.Errorf("the old blob, %v (-want +got):\n%s", err, diff)
	}
	heads, err := s.BlobHeads(ctx, []string{old}, now)
	wantHeads := map[string]memory.BlobHead{old: {Bytes: int64(len("package héllo")), Tokens: counts}}
	if diff := cmp.Diff(wantHeads, heads); diff != "" || err != nil {
		t.Errorf("the old blob's head, %v (-want +got):\n%s", err, diff)
	}
	var inRows int
	if err := s.wc.QueryRowContext(ctx, `SELECT count(*) FROM blobs WHERE content != ''`).Scan(&inRows); err != nil ||
		inRows != 0 {
		t.Errorf("blobs holding their content in their row: %d, %v; want none", inRows, err)
	}
	s.Close()
	open(t, path) // moved once: a second opening finds nothing to move
}

// A sweep deletes an expired blob's content with it.
func TestASweepDeletesABlobsContent(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	if err := s.SaveBlobs(ctx, []memory.Blob{{SHA256: fmt.Sprintf("%064x", 1), Content: "package a"}}, now,
		now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.sweep(ctx, now.Add(time.Hour))
	var rows int
	if err := s.wc.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM blobs) + (SELECT count(*) FROM blob_contents)`).
		Scan(&rows); err != nil || rows != 0 {
		t.Errorf("rows left of an expired blob after a sweep: %d, %v; want none", rows, err)
	}
}
