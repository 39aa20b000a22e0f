// Package sqlitestore keeps threads in one SQLite file (pure Go driver, no
// cgo) in WAL mode. Several processes may share the file: writes take the
// database lock up front and wait for it, so no append is lost.
//
// A store holds two pools on the file, shaped for WAL: one writer
// connection, since SQLite lets one write at a time and writers of this
// process are better queued in it than spinning on the file lock, and a
// few readers, which WAL lets read while the writer writes; a thread's read
// takes the writer's connection when no write holds it, since only that
// connection's page cache outlives the appends. Connections
// and their prepared statements live as long as the store: the store holds
// the writer's connection and runs one transaction on it at a time, which
// the writes that queued meanwhile share, a savepoint each (writer.go).
// The writer's connection keeps the threads' rows it read, as its own
// writes since left them, until another process commits (rows.go), so that
// a continued call's read reads neither its thread's row nor its turns
// from the file.
package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	turn_count      INTEGER NOT NULL DEFAULT 0,
	files_until     INTEGER NOT NULL DEFAULT 0,
	rev             TEXT NOT NULL DEFAULT '',
	weight          INTEGER NOT NULL DEFAULT 0,
	preview         TEXT
);
CREATE INDEX IF NOT EXISTS threads_recent ON threads (client_id, updated_at DESC, id DESC);
CREATE TABLE IF NOT EXISTS turns (
	thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,
	exchange_id TEXT NOT NULL DEFAULT '',
	body        TEXT NOT NULL,
	PRIMARY KEY (thread_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS thread_files (
	thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	sha256    TEXT NOT NULL,
	PRIMARY KEY (thread_id, sha256)
) WITHOUT ROWID;
-- A blob's content is in blob_contents, and content here is '': a row
-- holding the content kept what followed it (tokens, expires_at) behind
-- every page of it. Older versions' blobs are moved on (moveBlobs).
CREATE TABLE IF NOT EXISTS blobs (
	sha256     TEXT PRIMARY KEY,
	content    TEXT NOT NULL,
	tokens     TEXT NOT NULL DEFAULT '{}',
	expires_at INTEGER NOT NULL,
	bytes      INTEGER NOT NULL DEFAULT -1
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blobs_expiry ON blobs (expires_at);
CREATE TABLE IF NOT EXISTS blob_contents (
	sha256  TEXT PRIMARY KEY REFERENCES blobs (sha256) ON DELETE CASCADE,
	content TEXT NOT NULL
) WITHOUT ROWID;
-- A thread's initial context past inlineContext bytes: an append rewrites
-- the thread's row, and all it holds.
CREATE TABLE IF NOT EXISTS initial_contexts (
	thread_id TEXT PRIMARY KEY REFERENCES threads (id) ON DELETE CASCADE,
	body      TEXT NOT NULL
);
-- Older versions recorded each exchange here; its retries are still found.
CREATE TABLE IF NOT EXISTS exchanges (
	thread_id   TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
	exchange_id TEXT NOT NULL,
	PRIMARY KEY (thread_id, exchange_id)
) WITHOUT ROWID;
`

// Store is a memory.Store in SQLite.
type Store struct {
	w  *sql.DB   // the writer: one connection, wc
	wc *sql.Conn // held for the life of the store; taking writer lends it to one transaction or read
	// writer is a one-slot semaphore: unlike a mutex, a write queued for it
	// gives up when its context ends, rather than wait out the write ahead
	// of it (which may wait the busy timeout for another process's lock).
	// A thread's read (Get) takes it too when it is free, never waiting.
	writer chan struct{}
	queue  writeQueue // the writes waiting for writer (writer.go)
	// transactions counts the writer's transactions, for tests and
	// benchmarks: writes per transaction is what group commit saves.
	transactions atomic.Int64
	r            *sql.DB // the readers
	writes       writeStmts
	reads        readStmts
	cache        *memory.TurnCache
	rows         rowCache // the rows the writer's connection last saw (rows.go)
	// rowReads counts the thread rows read, for tests.
	rowReads atomic.Int64

	mu        sync.Mutex
	lastSweep time.Time

	// path is the database's, and opened the files it and its log named
	// when the store opened them; goneFile is set once one names another,
	// or none: which, plus one (0: none is gone; identity.go).
	path     string
	opened   [2]fileID
	goneFile atomic.Int32
	stat     func(string) (fs.FileInfo, error) // os.Stat; a test's may fail
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
	if err := ownerOnly(path); err != nil {
		return nil, err
	}
	busy := fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds())
	w, err := pool(path, 1, "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(ON)", busy)
	if err != nil {
		return nil, err
	}
	// Readers never write; more of them than cores would only queue for
	// the CPU. No mmap_size: SQLite unmaps a connection's mapping whenever
	// another connection has written since its last read, so under appends
	// a read remaps the file instead of reading its pages, for no gain.
	readers := max(4, runtime.GOMAXPROCS(0))
	r, err := pool(path, readers, "query_only(1)", busy)
	if err != nil {
		w.Close()
		return nil, err
	}
	s := &Store{w: w, r: r, reads: newReadStmts(r, readers), cache: memory.NewTurnCache(memory.DefaultTurnCacheBytes),
		rows: newRowCache(), writer: make(chan struct{}, 1), path: path, stat: os.Stat}
	if err := s.init(context.Background()); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// The file as the store's connections opened it: init has written to
	// it, so it exists.
	if err := s.openedFiles(); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

// ownerOnly makes the database readable by its owner alone, creating it
// so when it does not exist, and takes others' access away from the WAL
// and shared-memory files of an older release. SQLite creates those two
// with the database's mode, so they follow. It matters where an operator
// made the directory, which zen would have made 0700: one anyone may read
// would otherwise show them every thread. A file that is a link, that
// another user owns, or whose mode zen cannot narrow is refused: its
// owner, or the link's, could read every thread.
func ownerOnly(path string) error {
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600); err == nil {
		_ = f.Close()
	}
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		info, err := os.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("check %s: %w", name, err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link: zen keeps its threads in files of its own; remove the link "+
				"or set ZEN_DATA_DIR to a directory of zen's user", name)
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
			return fmt.Errorf("%s belongs to user %d, not zen's (%d), who could read every thread: give it to "+
				"zen's user or set ZEN_DATA_DIR to a directory of zen's user", name, st.Uid, os.Getuid())
		}
		if info.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(name, info.Mode().Perm()&^0o077); err != nil {
				return fmt.Errorf("%s may be read by other users and zen cannot change that: %w", name, err)
			}
		}
	}
	return nil
}

// pool opens conns connections on the file that are kept open.
func pool(path string, conns int, pragmas ...string) (*sql.DB, error) {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return db, nil
}

// describe adds what to do to the errors people meet: a locked or
// read-only file.
func describe(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "SQLITE_FULL") || strings.Contains(msg, "database or disk is full"):
		return fmt.Errorf("%w: %v (free space on the disk that holds ZEN_DATA_DIR)", memory.ErrFull, err)
	case strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked"):
		return fmt.Errorf("%w: %v (another process held the database lock too long)", memory.ErrUnavailable, err)
	case strings.Contains(msg, "readonly") || strings.Contains(msg, "SQLITE_CANTOPEN") ||
		strings.Contains(msg, "unable to open"):
		return fmt.Errorf("%w (check that the file and its directory are writable, or set ZEN_DATA_DIR)", err)
	}
	return err
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func (s *Store) Create(ctx context.Context, t *memory.Thread) error {
	s.sweep(ctx, t.UpdatedAt)
	return s.write(ctx, func(ctx context.Context) error {
		return s.insert(ctx, t, false)
	})
}

// exec runs one of the writer's statements.
func exec(ctx context.Context, st *sql.Stmt, args ...any) (sql.Result, error) {
	res, err := st.ExecContext(ctx, args...)
	return res, describe(err)
}

func (s *Store) insert(ctx context.Context, t *memory.Thread, replace bool) error {
	initial, err := memory.Encode(t.InitialContext)
	if err != nil {
		return fmt.Errorf("encode initial context: %w", err)
	}
	var owner string
	err = s.writes.owner.QueryRowContext(ctx, t.ID).Scan(&owner)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return describe(err)
	}
	exists := err == nil
	if err := memory.ImportClash(t, owner, exists, replace); err != nil {
		return err
	}
	if exists {
		if _, err := exec(ctx, s.writes.drop, t.ID); err != nil {
			return err
		}
		s.rows.change(rowChange{id: t.ID})
	}
	inline := string(initial)
	if len(initial) > inlineContext {
		inline = "" // initial_contexts holds it
	}
	_, err = exec(ctx, s.writes.insertThread, t.ID, t.ParentID, t.ToolName, t.ClientID, nanos(t.CreatedAt),
		nanos(t.UpdatedAt), nanos(t.ExpiresAt), inline, len(t.Turns), memory.NewRevision(), t.Weight,
		memory.FirstPrompt(t.Turns))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint") {
			return fmt.Errorf("%w: %s", memory.ErrExists, t.ID)
		}
		return err
	}
	if inline == "" {
		if _, err := exec(ctx, s.writes.insertContext, t.ID, string(initial)); err != nil {
			return err
		}
	}
	return s.insertTurns(ctx, t.ID, 0, "", t.Turns)
}

// insertTurns stores turns from seq first on, the first named by the
// exchange they are (none for a thread's first turns): an exchange, the
// usual two, in one statement.
func (s *Store) insertTurns(ctx context.Context, id string, first int, exchangeID string, turns []memory.Turn) error {
	bodies := make([]string, len(turns))
	for i, turn := range turns {
		body, err := memory.EncodeTurn(turn)
		if err != nil {
			return fmt.Errorf("encode turn: %w", err)
		}
		bodies[i] = string(body)
		for _, f := range turn.Files {
			if _, err := exec(ctx, s.writes.insertFile, id, f.SHA256); err != nil {
				return err
			}
		}
	}
	if len(bodies) == 2 {
		_, err := exec(ctx, s.writes.insertTwoTurns, id, first, exchangeID, bodies[0], bodies[1])
		return err
	}
	for i, body := range bodies {
		if _, err := exec(ctx, s.writes.insertTurn, id, first+i, exchangeID, body); err != nil {
			return err
		}
		exchangeID = ""
	}
	return nil
}

func (s *Store) Delete(ctx context.Context, id string) error {
	defer s.cache.Forget(id)
	return s.write(ctx, func(ctx context.Context) error {
		res, err := exec(ctx, s.writes.drop, id)
		if err != nil {
			return err
		}
		s.rows.change(rowChange{id: id})
		if n, _ := res.RowsAffected(); n == 0 {
			return memory.ErrNotFound
		}
		return nil
	})
}

func (s *Store) Import(ctx context.Context, threads []*memory.Thread, replace bool, _ time.Time) error {
	return s.writeLong(ctx, func(ctx context.Context) error {
		for _, t := range threads {
			if err := s.insert(ctx, t, replace); err != nil {
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
		_ = s.writeLong(ctx, func(ctx context.Context) error {
			if _, err := exec(ctx, s.writes.sweepThreads, nanos(now)); err != nil {
				return err
			}
			// A read is answered from a kept row only while it is live at the
			// read's time, which a clock set back can put before the sweep's.
			s.rows.change(rowChange{})
			_, err := exec(ctx, s.writes.sweepBlobs, nanos(now))
			return err
		})
	}
}

// Close closes the statements, then the connections.
func (s *Store) Close() error {
	s.reads.close()
	s.writes.close()
	var held error
	if s.wc != nil {
		held = s.wc.Close()
	}
	return errors.Join(held, s.r.Close(), s.w.Close())
}
