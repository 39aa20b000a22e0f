package sqlitestore

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
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
	before := readChars(t)
	heads, err := s.BlobHeads(context.Background(), shas, now)
	read := readChars(t) - before
	if err != nil || len(heads) != len(shas) || heads[shas[0]].Bytes != 512<<10 {
		t.Fatalf("heads %v, %v; want %d of 512 KiB", heads, err, len(shas))
	}
	if read > 1<<20 {
		t.Errorf("reading the heads of 16 files of 512 KiB read %d KiB; want less than their content", read>>10)
	}
}

// readChars is what this process has read so far (rchar: every read and
// pread, whether the kernel had the data cached or not).
func readChars(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Fatalf("this test reads /proc/self/io (Linux): %v", err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("/proc/self/io has no rchar")
	return 0
}

// A file an older version wrote holds its blobs' content in their rows,
// with no length: they are read as they were, their heads say so (-1),
// and blobs stored since go the new way.
func TestAnOlderFilesBlobsAreReadAsTheyWere(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	old := fmt.Sprintf("%064x", 1)
	for _, q := range []string{
		`CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, content TEXT NOT NULL, tokens TEXT NOT NULL DEFAULT '{}',
			expires_at INTEGER NOT NULL) WITHOUT ROWID`,
		`INSERT INTO blobs (sha256, content, tokens, expires_at) VALUES (?, 'package old', '{"o200k_base":2}', ?)`,
	} {
		args := []any{old, nanos(now.Add(time.Hour))}
		if _, err := db.Exec(q, args[:strings.Count(q, "?")]...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := open(t, path)
	ctx := context.Background()
	fresh := fmt.Sprintf("%064x", 2)
	// Stored again, the old blob stays as it was; the fresh one is stored the new way.
	if err := s.SaveBlobs(ctx, []memory.Blob{{SHA256: old, Content: "package old"}, {SHA256: fresh,
		Content: "package fresh", Tokens: map[string]int64{"o200k_base": 2}}}, now, now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	blobs, err := s.GetBlobs(ctx, []string{old, fresh}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]memory.Blob{
		old:   {SHA256: old, Content: "package old", Tokens: map[string]int64{"o200k_base": 2}},
		fresh: {SHA256: fresh, Content: "package fresh", Tokens: map[string]int64{"o200k_base": 2}},
	}
	if diff := cmp.Diff(want, blobs); diff != "" {
		t.Errorf("the blobs (-want +got):\n%s", diff)
	}
	heads, err := s.BlobHeads(ctx, []string{old, fresh}, now.Add(90*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	wantHeads := map[string]memory.BlobHead{
		old:   {Bytes: -1, Tokens: map[string]int64{"o200k_base": 2}},
		fresh: {Bytes: int64(len("package fresh")), Tokens: map[string]int64{"o200k_base": 2}},
	}
	if diff := cmp.Diff(wantHeads, heads); diff != "" {
		t.Errorf("the heads, the old blob kept longer by its second save (-want +got):\n%s", diff)
	}
	var inRows int
	if err := s.wc.QueryRowContext(ctx, `SELECT count(*) FROM blobs WHERE content != ''`).Scan(&inRows); err != nil ||
		inRows != 1 {
		t.Errorf("blobs holding their content in their row: %d, %v; want the old one alone", inRows, err)
	}
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
