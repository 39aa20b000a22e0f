package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// added are the columns files written by older versions lack. files_until
// records how long a thread's files are kept (Unix ns), so most appends
// leave the files alone; files of threads written before it existed are
// kept again by their next append. rev names the thread's write as a whole
// (see memory.TurnCache); older threads get one when it is added.
// turns.exchange_id names the exchange whose first turn the row is (see
// Append); the exchanges older versions recorded stay in their table.
// weight is what the thread weighs (memory.MaxThreadWeight): a thread
// written before it existed is weighed once (countWeights). blobs.bytes is
// the length of a blob's content, which blob_contents holds (moveBlobs).
// threads.preview is what a listing shows of the thread's first prompt
// (memory.FirstPrompt), kept as its first turns are written, so that a
// listing reads no turn; an older thread's is NULL, and read from its
// turns (previewOfTurns).
var added = []struct{ table, column, add, fill string }{
	{"threads", "files_until", `ALTER TABLE threads ADD COLUMN files_until INTEGER NOT NULL DEFAULT 0`, ""},
	{"threads", "rev", `ALTER TABLE threads ADD COLUMN rev TEXT NOT NULL DEFAULT ''`,
		`UPDATE threads SET rev = lower(hex(randomblob(8))) WHERE rev = ''`},
	{"turns", "exchange_id", `ALTER TABLE turns ADD COLUMN exchange_id TEXT NOT NULL DEFAULT ''`, ""},
	{"threads", "weight", `ALTER TABLE threads ADD COLUMN weight INTEGER NOT NULL DEFAULT 0`, ""},
	{"blobs", "bytes", `ALTER TABLE blobs ADD COLUMN bytes INTEGER NOT NULL DEFAULT -1`, ""},
	{"threads", "preview", `ALTER TABLE threads ADD COLUMN preview TEXT`, ""},
}

// inlineContext is the most of a thread's initial context (as JSON bytes)
// its row holds; more is kept in initial_contexts. An append rewrites the
// thread's row, and a context of 512 KiB there (a first call's arguments;
// up to 2 MB) cost each append 130 WAL frames more and four times the CPU.
const inlineContext = 1 << 10

// contextsMoved is the user_version of a file whose large initial contexts
// are in initial_contexts: older files had them in their threads' rows.
const contextsMoved = 1

// moveContexts moves the initial contexts past inlineContext from their
// threads' rows into initial_contexts.
var moveContexts = []string{
	fmt.Sprintf(`INSERT OR REPLACE INTO initial_contexts (thread_id, body) SELECT id, initial_context FROM threads
		WHERE length(CAST(initial_context AS BLOB)) > %d`, inlineContext),
	fmt.Sprintf(`UPDATE threads SET initial_context = '' WHERE length(CAST(initial_context AS BLOB)) > %d`,
		inlineContext),
}

// blobsMoved is the user_version of a file whose blobs hold their content
// in blob_contents, and their length: older files had the content in the
// blob's row, before its counts and expiry, which a selection could then
// weigh only by reading all of it.
const blobsMoved = 3

// moveBlobs moves the content of the blobs older versions stored into
// blob_contents and records its length.
var moveBlobs = []string{
	`INSERT OR IGNORE INTO blob_contents (sha256, content) SELECT sha256, content FROM blobs WHERE bytes < 0`,
	`UPDATE blobs SET bytes = length(CAST(content AS BLOB)), content = '' WHERE bytes < 0`,
}

// weightsCounted is the user_version of a file whose threads written
// before weights were kept have one: they counted from nothing, so that
// reads made room for none of them, and appends let them grow by the whole
// bound more.
const weightsCounted = 2

// countWeights gives each thread at least about the weight it would have
// been written with: its turns and initial context as they are stored, and
// memory.ValueWeight for each turn (not for each value within one: JSON
// cannot count those). Threads written before weights were kept counted
// from nothing, and those appended to since from what the appends weighed.
var countWeights = fmt.Sprintf(`UPDATE threads SET weight = max(weight,
	coalesce((SELECT sum(length(CAST(body AS BLOB))) + count(*) * %d FROM turns WHERE thread_id = threads.id), 0)
	+ coalesce(length(CAST(CASE initial_context WHEN '' THEN
		(SELECT body FROM initial_contexts WHERE thread_id = threads.id) ELSE initial_context END AS BLOB)), 0))`,
	memory.ValueWeight)

// dropped are the indexes older files have that nothing reads now.
// threads_expiry served only the sweep, once a minute, which scans the
// table instead; keeping it cost every append a WAL frame or more (its
// entry moves with the thread's expiry).
var dropped = []string{`DROP INDEX IF EXISTS threads_expiry`}

// init takes the writer's connection, creates the schema, adds the
// columns older files lack, drops the indexes they no longer need, and
// prepares the writer's statements.
func (s *Store) init(ctx context.Context) error {
	wc, err := s.w.Conn(ctx)
	if err != nil {
		return describe(err)
	}
	s.wc = wc
	if err := prepareOn(ctx, wc, s.writes.transaction()); err != nil {
		return err
	}
	if _, err := wc.ExecContext(ctx, schema); err != nil {
		return describe(err)
	}
	// Under the write lock, so that two processes opening an older file
	// do not both add the column.
	err = s.write(ctx, func(ctx context.Context) error {
		for _, q := range dropped {
			if _, err := wc.ExecContext(ctx, q); err != nil {
				return describe(err)
			}
		}
		if err := addColumns(ctx, wc); err != nil {
			return err
		}
		// A write every open makes: SQLite opens a file it may not write
		// read-only without a word, and every call would then run its
		// model for an answer it could not save.
		var version int
		if err := wc.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
			return describe(err)
		}
		version, err := migrate(ctx, wc, version)
		if err != nil {
			return err
		}
		if _, err := wc.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, version)); err != nil {
			return describe(err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return prepareOn(ctx, wc, s.writes.rows())
}

// addColumns adds the columns in added that the file lacks.
func addColumns(ctx context.Context, wc *sql.Conn) error {
	for _, a := range added {
		var n int
		err := wc.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, a.table,
			a.column).Scan(&n)
		if err != nil {
			return describe(err)
		}
		if n > 0 {
			continue // added already, by a later version or another process
		}
		if _, err := wc.ExecContext(ctx, a.add); err != nil {
			return describe(err)
		}
		if a.fill != "" {
			if _, err := wc.ExecContext(ctx, a.fill); err != nil {
				return describe(err)
			}
		}
	}
	return nil
}

// migrate moves the data of a file at user_version version on to the
// latest version, and returns it.
func migrate(ctx context.Context, wc *sql.Conn, version int) (int, error) {
	if version < contextsMoved {
		for _, q := range moveContexts {
			if _, err := wc.ExecContext(ctx, q); err != nil {
				return version, describe(err)
			}
		}
		version = contextsMoved
	}
	if version < weightsCounted {
		if _, err := wc.ExecContext(ctx, countWeights); err != nil {
			return version, describe(err)
		}
		version = weightsCounted
	}
	if version < blobsMoved {
		for _, q := range moveBlobs {
			if _, err := wc.ExecContext(ctx, q); err != nil {
				return version, describe(err)
			}
		}
		version = blobsMoved
	}
	return version, nil
}
