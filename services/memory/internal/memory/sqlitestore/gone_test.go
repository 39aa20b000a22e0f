package sqlitestore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// TestADatabaseRemovedOrReplacedIsNoLongerWritten: a database file removed
// or replaced while zen runs took every later exchange into the file zen
// still had open, which no one could open again: calls were answered as
// stored, health said serving, and a restart found none of them. Now the
// store's check fails naming the file, it warns, and it refuses writes.
func TestADatabaseRemovedOrReplacedIsNoLongerWritten(t *testing.T) {
	t.Parallel()
	for name, change := range map[string]func(t *testing.T, path string){
		"removed": func(t *testing.T, path string) {
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatal(err)
				}
			}
		},
		// The log holds every write since the last checkpoint: gone, a
		// crash loses them, and the writes after it go where no start
		// reads them.
		"its log removed": func(t *testing.T, path string) {
			for _, p := range []string{path + "-wal", path + "-shm"} {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		},
		"replaced": func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "restored.db")
			if err := os.WriteFile(other, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, now := context.Background(), time.Now()
			path := filepath.Join(t.TempDir(), "memory.db")
			s := open(t, path)
			th := create(t, s, chatThread(now))
			if err := s.Ping(ctx); err != nil {
				t.Fatalf("the file as opened: %v", err)
			}
			change(t, path)
			err := s.Ping(ctx)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "restart") {
				// path names the log too: it is path-wal.
				t.Errorf("check: %v; want it to fail, naming the file and what to do", err)
			}
			if w := s.Warnings(); len(w) != 1 || !strings.Contains(w[0], path) {
				t.Errorf("warnings %q, want the file named", w)
			}
			_, err = s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, qa(), 10, now, now.Add(time.Hour))
			if !errors.Is(err, memory.ErrGone) || !strings.Contains(err.Error(), path) {
				t.Errorf("append: %v; want it refused as gone, naming the file", err)
			}
			if err := s.Create(ctx, chatThread(now)); !errors.Is(err, memory.ErrGone) {
				t.Errorf("create: %v; want it refused", err)
			}
		})
	}
}

// TestACheckThatCannotTellLeavesTheStoreAsItWas: a stat that fails
// otherwise than for a missing file (an I/O error, a permission) fails the
// check, and writes go on: it switched the store off until zen restarted.
func TestACheckThatCannotTellLeavesTheStoreAsItWas(t *testing.T) {
	t.Parallel()
	ctx, now := context.Background(), time.Now()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	s.stat = func(string) (fs.FileInfo, error) { return nil, syscall.EIO }
	if err := s.Ping(ctx); err == nil || errors.As(err, new(*GoneError)) {
		t.Errorf("check with the disk failing: %v; want an error, not a verdict", err)
	}
	s.stat = os.Stat
	if err := s.Ping(ctx); err != nil {
		t.Errorf("the next check: %v", err)
	}
	th := create(t, s, chatThread(now))
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, qa(), 10, now, now.Add(time.Hour)); err != nil {
		t.Errorf("append after the disk answered again: %v", err)
	}
}
