package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// A full disk fails a write with ErrFull, which memory tells apart from a
// busy store (trying again does not help), and leaves what was stored
// readable. The file's page limit stands in for the disk.
func TestAFullDiskIsErrFull(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now()
	kept := create(t, s, chatThread(now))
	var pages int
	if err := s.wc.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.wc.ExecContext(ctx, fmt.Sprint("PRAGMA max_page_count = ", pages)); err != nil {
		t.Fatal(err)
	}
	big := chatThread(now)
	big.Turns = []memory.Turn{{Role: memory.RoleUser, Content: strings.Repeat("a full disk ", 10_000)}}
	if err := s.Create(ctx, big); !errors.Is(err, memory.ErrFull) {
		t.Errorf("create on a full disk: %v, want ErrFull", err)
	}
	if _, err := s.Get(ctx, kept.ID, now); err != nil {
		t.Errorf("read a thread stored before the disk filled: %v", err)
	}
}
