// Package sqlitestore keeps threads in one SQLite file (pure Go driver, no
// cgo) in WAL mode. Several processes may share the file: writes take the
// database lock up front and wait for it, so no append is lost.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// BusyTimeout is how long a write waits for another process's lock.
const BusyTimeout = 10 * time.Second

// sweepEvery bounds how often Create deletes expired threads.
const sweepEvery = time.Minute

const schema = `
CREATE TABLE IF NOT EXISTS threads (
	id              TEXT PRIMARY KEY,
	parent_id       TEXT NOT NULL DEFAULT '',
	tool_name       TEXT NOT NULL,
	client_id       TEXT NOT NULL DEFAULT '',
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL,
	expires_at      INTEGER NOT NULL,
	initial_context TEXT NOT NULL DEFAULT 'null',
	turn_count      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS threads_recent ON threads (client_id, updated_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS threads_expiry ON threads (expires_at);
CREATE TABLE IF NOT EXISTS turns (
	thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	seq       INTEGER NOT NULL,
	body      TEXT NOT NULL,
	PRIMARY KEY (thread_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS thread_files (
	thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	sha256    TEXT NOT NULL,
	PRIMARY KEY (thread_id, sha256)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blobs (
	sha256     TEXT PRIMARY KEY,
	content    TEXT NOT NULL,
	tokens     TEXT NOT NULL DEFAULT '{}',
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blobs_expiry ON blobs (expires_at);
CREATE TABLE IF NOT EXISTS exchanges (
	thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	exchange_id TEXT NOT NULL,
	PRIMARY KEY (thread_id, exchange_id)
) WITHOUT ROWID;
`

// Store is a memory.Store in SQLite.
type Store struct {
	db *sql.DB

	mu        sync.Mutex
	lastSweep time.Time
}

var _ memory.Store = (*Store)(nil)

// Open opens (creating if needed) the database at path. WAL lets readers
// work while one writer writes; synchronous=NORMAL survives any process
// crash, including kill -9, without an fsync per write.
func Open(path string) (*Store, error) { return OpenWithTimeout(path, BusyTimeout) }

// OpenWithTimeout is Open with another wait for a held lock.
func OpenWithTimeout(path string, busyTimeout time.Duration) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create the directory for %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("_txlock", "immediate")
	for _, p := range []string{"journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(ON)", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds())} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, describe(err))
	}
	return &Store{db: db}, nil
}

// describe adds what to do to the errors people meet: a locked or
// read-only file.
func describe(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked"):
		return fmt.Errorf("%w: %v (another process held the database lock too long)", memory.ErrUnavailable, err)
	case strings.Contains(msg, "readonly") || strings.Contains(msg, "SQLITE_CANTOPEN") || strings.Contains(msg, "unable to open"):
		return fmt.Errorf("%w (check that the file and its directory are writable, or set ZEN_DATA_DIR)", err)
	}
	return err
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func (s *Store) Create(ctx context.Context, t *memory.Thread) error {
	s.sweep(ctx, t.UpdatedAt)
	return s.write(ctx, func(tx *sql.Tx) error {
		return insert(ctx, tx, t, false)
	})
}

// write runs fn in a transaction that holds the write lock from its start.
func (s *Store) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return describe(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return describe(tx.Commit())
}

func insert(ctx context.Context, tx *sql.Tx, t *memory.Thread, replace bool) error {
	initial, err := json.Marshal(t.InitialContext)
	if err != nil {
		return fmt.Errorf("encode initial context: %w", err)
	}
	var owner string
	err = tx.QueryRowContext(ctx, `SELECT client_id FROM threads WHERE id = ?`, t.ID).Scan(&owner)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return describe(err)
	}
	exists := err == nil
	if err := memory.ImportClash(t, owner, exists, replace); err != nil {
		return err
	}
	if exists {
		if _, err := tx.ExecContext(ctx, `DELETE FROM threads WHERE id = ?`, t.ID); err != nil {
			return describe(err)
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO threads (id, parent_id, tool_name, client_id, created_at, updated_at, expires_at, initial_context, turn_count)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.ParentID, t.ToolName, t.ClientID, nanos(t.CreatedAt), nanos(t.UpdatedAt), nanos(t.ExpiresAt), string(initial), len(t.Turns))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint") {
			return fmt.Errorf("%w: %s", memory.ErrExists, t.ID)
		}
		return describe(err)
	}
	return insertTurns(ctx, tx, t.ID, 0, t.Turns)
}

func insertTurns(ctx context.Context, tx *sql.Tx, id string, first int, turns []memory.Turn) error {
	for i, turn := range turns {
		body, err := json.Marshal(turn)
		if err != nil {
			return fmt.Errorf("encode turn: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO turns (thread_id, seq, body) VALUES (?, ?, ?)`, id, first+i, string(body)); err != nil {
			return describe(err)
		}
		for _, f := range turn.Files {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO thread_files (thread_id, sha256) VALUES (?, ?)`, id, f.SHA256); err != nil {
				return describe(err)
			}
		}
	}
	return nil
}

func (s *Store) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	row := s.db.QueryRowContext(ctx, `SELECT id, parent_id, tool_name, client_id, created_at, updated_at, expires_at, initial_context
		FROM threads WHERE id = ? AND expires_at > ?`, id, nanos(now))
	t, err := scanThread(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, memory.ErrNotFound
	}
	if err != nil {
		return nil, describe(err)
	}
	if t.Turns, err = s.turns(ctx, id); err != nil {
		return nil, err
	}
	return t, nil
}

type scanner interface{ Scan(...any) error }

func scanThread(row scanner) (*memory.Thread, error) {
	var t memory.Thread
	var created, updated, expires int64
	var initial string
	if err := row.Scan(&t.ID, &t.ParentID, &t.ToolName, &t.ClientID, &created, &updated, &expires, &initial); err != nil {
		return nil, err
	}
	t.CreatedAt, t.UpdatedAt, t.ExpiresAt = fromNanos(created), fromNanos(updated), fromNanos(expires)
	if err := json.Unmarshal([]byte(initial), &t.InitialContext); err != nil {
		return nil, fmt.Errorf("thread %s: decode initial context: %w", t.ID, err)
	}
	return &t, nil
}

func (s *Store) turns(ctx context.Context, id string) ([]memory.Turn, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT body FROM turns WHERE thread_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, describe(err)
	}
	defer rows.Close()
	var out []memory.Turn
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return nil, describe(err)
		}
		var turn memory.Turn
		if err := json.Unmarshal([]byte(body), &turn); err != nil {
			return nil, fmt.Errorf("thread %s: decode turn: %w", id, err)
		}
		out = append(out, turn)
	}
	return out, describe(rows.Err())
}

func (s *Store) Delete(ctx context.Context, id string) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM threads WHERE id = ?`, id)
		if err != nil {
			return describe(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return memory.ErrNotFound
		}
		return nil
	})
}

func (s *Store) Import(ctx context.Context, threads []*memory.Thread, replace bool) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, t := range threads {
			if err := insert(ctx, tx, t, replace); err != nil {
				return err
			}
		}
		return nil
	})
}

// sweep deletes expired threads at most once a minute; their turns go
// with them. A failed sweep only delays the cleanup.
func (s *Store) sweep(ctx context.Context, now time.Time) {
	s.mu.Lock()
	due := now.Sub(s.lastSweep) > sweepEvery
	if due {
		s.lastSweep = now
	}
	s.mu.Unlock()
	if due {
		_, _ = s.db.ExecContext(ctx, `DELETE FROM threads WHERE expires_at <= ?`, nanos(now))
		_, _ = s.db.ExecContext(ctx, `DELETE FROM blobs WHERE expires_at <= ?`, nanos(now))
	}
}

func (s *Store) SaveBlobs(ctx context.Context, blobs []memory.Blob, _, expiresAt time.Time) error {
	if len(blobs) == 0 {
		return nil
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		for _, b := range blobs {
			counts, err := json.Marshal(b.Tokens)
			if err != nil {
				return fmt.Errorf("encode token counts: %w", err)
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO blobs (sha256, content, tokens, expires_at) VALUES (?, ?, ?, ?)
				ON CONFLICT (sha256) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)`,
				b.SHA256, b.Content, string(counts), nanos(expiresAt))
			if err != nil {
				return describe(err)
			}
		}
		return nil
	})
}

func (s *Store) GetBlobs(ctx context.Context, shas []string, now time.Time) (map[string]memory.Blob, error) {
	out := map[string]memory.Blob{}
	if len(shas) == 0 {
		return out, nil
	}
	args := []any{nanos(now)}
	for _, sha := range shas {
		args = append(args, sha)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT sha256, content, tokens FROM blobs WHERE expires_at > ? AND sha256 IN (?`+
		strings.Repeat(", ?", len(shas)-1)+`)`, args...)
	if err != nil {
		return nil, describe(err)
	}
	defer rows.Close()
	for rows.Next() {
		var b memory.Blob
		var counts string
		if err := rows.Scan(&b.SHA256, &b.Content, &counts); err != nil {
			return nil, describe(err)
		}
		if err := json.Unmarshal([]byte(counts), &b.Tokens); err != nil {
			return nil, fmt.Errorf("blob %s: decode token counts: %w", b.SHA256, err)
		}
		out[b.SHA256] = b
	}
	return out, describe(rows.Err())
}

func (s *Store) Close() error { return s.db.Close() }
