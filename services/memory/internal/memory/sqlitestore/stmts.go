package sqlitestore

import (
	"context"
	"database/sql"
	"sync"
)

// Statements are prepared once and kept for the life of the store:
// parsing the SQL text of every query was a tenth of memory's CPU.
// database/sql prepares a statement again on each connection that runs it,
// once, and keeps it there.

// writeStmts are every statement the writer's connection runs, prepared on
// it when the store opens: BEGIN and COMMIT included (a database/sql
// transaction has the driver prepare those two again for each write), and
// the reads of a thread Get runs there.
type writeStmts struct {
	begin, commit, rollback, savepoint, rollbackTo, release *sql.Stmt
	owner, drop, insertThread, insertTurn, insertTwoTurns   *sql.Stmt
	insertFile, head, advance, holds, stateAfter            *sql.Stmt
	keepFiles, getThread, getTurns, dataVersion             *sql.Stmt
	saveBlob, saveContent, sweepThreads, sweepBlobs         *sql.Stmt
	insertContext                                           *sql.Stmt
}

type stmtText struct {
	stmt  **sql.Stmt
	query string
}

// transaction are the statements write needs, which need no table.
func (w *writeStmts) transaction() []stmtText {
	return []stmtText{{&w.begin, `BEGIN IMMEDIATE`}, {&w.commit, `COMMIT`}, {&w.rollback, `ROLLBACK`},
		{&w.savepoint, `SAVEPOINT write`}, {&w.rollbackTo, `ROLLBACK TO write`}, {&w.release, `RELEASE write`}}
}

// rows are the statements on the tables.
func (w *writeStmts) rows() []stmtText {
	return []stmtText{
		{&w.owner, `SELECT client_id FROM threads WHERE id = ?`},
		{&w.drop, `DELETE FROM threads WHERE id = ?`},
		{&w.insertThread, `INSERT INTO threads (id, parent_id, tool_name, client_id, created_at, updated_at,
			expires_at, initial_context, turn_count, rev, weight, preview) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.insertContext, `INSERT INTO initial_contexts (thread_id, body) VALUES (?, ?)`},
		{&w.insertTurn, `INSERT INTO turns (thread_id, seq, exchange_id, body) VALUES (?, ?, ?, ?)`},
		{&w.insertTwoTurns, `INSERT INTO turns (thread_id, seq, exchange_id, body)
			VALUES (?1, ?2, ?3, ?4), (?1, ?2 + 1, '', ?5)`},
		{&w.insertFile, `INSERT OR IGNORE INTO thread_files (thread_id, sha256) VALUES (?, ?)`},
		{&w.head, `SELECT turn_count, expires_at FROM threads WHERE id = ? AND client_id = ?`},
		// ?1 turns, ?2 now, ?3 the new expiry, ?4 whether the turns bring
		// files, ?5 how long the files are then kept, ?6 and ?7 the thread
		// and its client, ?8 the turn limit, ?9 what the turns weigh and ?10
		// what the thread may (Append).
		// A thread's first prompt is among its first two turns: one without
		// turns takes the new turns' (?11), one whose first turn is not the
		// user's takes the first new turn's (?12).
		{&w.advance, `UPDATE threads SET turn_count = turn_count + ?1, updated_at = ?2, expires_at = ?3,
			files_until = CASE WHEN ?4 OR files_until < ?3 THEN ?5 ELSE files_until END, weight = weight + ?9,
			preview = CASE WHEN turn_count = 0 THEN ?11
				WHEN turn_count = 1 AND coalesce((SELECT json_extract(body, '$.role') FROM turns
					WHERE thread_id = ?6 AND seq = 0), 0) != 1 THEN ?12
				ELSE preview END
			WHERE id = ?6 AND client_id = ?7 AND expires_at > ?2 AND turn_count + ?1 <= ?8
				AND weight + ?9 <= ?10
			RETURNING turn_count, files_until, rev, weight`},
		// Whether the thread holds exchange ?2 among its turns ?3 to ?4, or
		// an older version recorded it.
		{&w.holds, `SELECT EXISTS (SELECT 1 FROM turns
				WHERE thread_id = ?1 AND seq >= ?3 AND seq < ?4 AND exchange_id = ?2)
			OR EXISTS (SELECT 1 FROM exchanges WHERE thread_id = ?1 AND exchange_id = ?2)`},
		// Whether a turn of ?2 to ?3 keeps a workflow state of tool ?4.
		{&w.stateAfter, `SELECT EXISTS (SELECT 1 FROM turns WHERE thread_id = ?1 AND seq >= ?2 AND seq < ?3
				AND json_extract(body, '$.tool_name') = ?4 AND json_type(body, '$.workflow_state') = 'object')`},
		{&w.keepFiles, `UPDATE blobs SET expires_at = ?1
			WHERE sha256 IN (SELECT sha256 FROM thread_files WHERE thread_id = ?2) AND expires_at < ?1`},
		{&w.saveBlob, `INSERT INTO blobs (sha256, content, tokens, expires_at, bytes) VALUES (?1, '', ?2, ?3, ?4)
			ON CONFLICT (sha256) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)`},
		{&w.saveContent, `INSERT INTO blob_contents (sha256, content) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING`},
		{&w.sweepThreads, `DELETE FROM threads WHERE expires_at <= ?`},
		{&w.sweepBlobs, `DELETE FROM blobs WHERE expires_at <= ?`},
		{&w.getThread, getThread},
		{&w.getTurns, getTurns},
		{&w.dataVersion, `PRAGMA data_version`},
	}
}

func prepareOn(ctx context.Context, conn *sql.Conn, stmts []stmtText) error {
	for _, p := range stmts {
		stmt, err := conn.PrepareContext(ctx, p.query)
		if err != nil {
			return describe(err)
		}
		*p.stmt = stmt
	}
	return nil
}

func (w *writeStmts) close() {
	for _, p := range append(w.transaction(), w.rows()...) {
		if *p.stmt != nil {
			_ = (*p.stmt).Close()
		}
	}
}

// readStmts prepares each reader query the first time it runs: listings
// build theirs from the filters they are given, a handful of texts.
//
// A read first takes one of slots, one per reader connection, with its
// caller's context: its statements may then run with a context that
// cannot end (statementContext), which would also make database/sql's own
// wait for a free connection endless, and a caller that gives up must
// still leave that wait at once. A read holds one connection at a time.
type readStmts struct {
	db    *sql.DB
	stmts sync.Map      // query text → *sql.Stmt
	slots chan struct{} // a reader connection each
}

func newReadStmts(db *sql.DB, conns int) readStmts {
	return readStmts{db: db, slots: make(chan struct{}, conns)}
}

// take waits for a reader connection to be free, as long as ctx lets it,
// and returns what gives it back.
func (r *readStmts) take(ctx context.Context) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case r.slots <- struct{}{}:
		return func() { <-r.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *readStmts) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := r.stmts.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := r.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, describe(err)
	}
	if prev, loaded := r.stmts.LoadOrStore(query, st); loaded {
		_ = st.Close() // another caller prepared it first
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

func (r *readStmts) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := r.get(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, args...)
	return rows, describe(err)
}

func (r *readStmts) close() {
	r.stmts.Range(func(_, st any) bool {
		_ = st.(*sql.Stmt).Close()
		return true
	})
}
