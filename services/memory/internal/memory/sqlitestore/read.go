package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

const (
	getThread = `SELECT ` + threadColumns + `, turn_count, rev FROM threads WHERE id = ? AND expires_at > ?`
	// SQLite takes the content out of the turn's JSON faster than
	// encoding/json reads it. The turns are read only while the thread is
	// still at revision ?4, the one its row was read at: in another
	// statement, the row and the turns may be two versions'.
	getTurns = `SELECT json_remove(body, '$.content'), coalesce(json_extract(body, '$.content'), '')
		FROM turns WHERE thread_id = ?1 AND seq >= ?2 AND seq < ?3
			AND EXISTS (SELECT 1 FROM threads WHERE id = ?1 AND rev = ?4)
		ORDER BY seq`
)

// Get reads the thread on the writer's connection when no write holds it,
// else on a reader. SQLite drops a connection's page cache whenever
// another connection has written since its last read: under appends a
// reader fetches every page of a read from the file again (nine reads a
// Get, measured), while the writer's cache holds the pages it wrote.
func (s *Store) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	return memory.ReadAgain(func() string { return "thread " + id }, func() (*memory.Thread, error) {
		return s.get(ctx, id, now)
	})
}

// get is one attempt of Get.
func (s *Store) get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	select {
	case s.writer <- struct{}{}:
		return s.getOnWriter(ctx, id, now)
	default:
	}
	release, err := s.reads.take(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx = statementContext(ctx)
	thread, err := s.reads.get(ctx, getThread)
	if err != nil {
		return nil, err
	}
	row, err := s.readRow(ctx, thread, id, now)
	if err != nil {
		return nil, err
	}
	return s.withTurns(row, func(from int) ([]memory.Turn, error) {
		return s.turns(ctx, id, row.rev, from, row.count)
	})
}

// getOnWriter is Get on the writer's connection, which the caller has
// taken: it reads the row, unless the writer's connection has kept it
// (rows.go), and up to writerTurns turns the process does not hold yet
// (another process's appends). More (a thread first read since a restart)
// are read on a reader once the writer is given back, so that a long read
// does not hold up the writes.
func (s *Store) getOnWriter(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	held := true
	giveBack := func() {
		if held {
			held = false
			<-s.writer
		}
	}
	defer giveBack()
	sctx := statementContext(ctx)
	row, ok, err := s.kept(sctx, id, now)
	if err != nil {
		return nil, err
	}
	if !ok {
		if row, err = s.readRow(sctx, s.writes.getThread, id, now); err != nil {
			return nil, err
		}
		s.rows.keep(row)
	}
	count := row.count
	return s.withTurns(row, func(from int) ([]memory.Turn, error) {
		if count-from <= writerTurns {
			return queryTurns(sctx, s.writes.getTurns, id, row.rev, from, count)
		}
		giveBack()
		release, err := s.reads.take(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		return s.turns(sctx, id, row.rev, from, count)
	})
}

// writerTurns is the most turns a read on the writer's connection reads
// from the file.
const writerTurns = 16

// readRow reads the thread's row with thread (getThread).
func (s *Store) readRow(ctx context.Context, thread *sql.Stmt, id string, now time.Time) (threadRow, error) {
	s.rowReads.Add(1)
	var row threadRow
	t, err := scanThread(thread.QueryRowContext(ctx, id, nanos(now)), &row.count, &row.rev)
	if errors.Is(err, sql.ErrNoRows) {
		return threadRow{}, memory.ErrNotFound
	}
	if err != nil {
		return threadRow{}, describe(err)
	}
	row.thread = t
	return row, nil
}

// withTurns gives the row's thread its turns: those the cache holds, and
// the rest read from index from on with rest.
func (s *Store) withTurns(row threadRow, rest func(from int) ([]memory.Turn, error)) (*memory.Thread, error) {
	turns, err := s.cache.Read(row.thread.ID, row.rev, row.count, rest)
	if err != nil {
		return nil, err
	}
	row.thread.Turns = turns
	return row.thread, nil
}

type scanner interface{ Scan(...any) error }

// scanThread reads threadColumns, then the extra columns into more.
func scanThread(row scanner, more ...any) (*memory.Thread, error) {
	var t memory.Thread
	var created, updated, expires int64
	var initial string
	cols := append([]any{&t.ID, &t.ParentID, &t.ToolName, &t.ClientID, &created, &updated, &expires, &initial}, more...)
	if err := row.Scan(cols...); err != nil {
		return nil, err
	}
	t.CreatedAt, t.UpdatedAt, t.ExpiresAt = fromNanos(created), fromNanos(updated), fromNanos(expires)
	if err := json.Unmarshal([]byte(initial), &t.InitialContext); err != nil {
		return nil, fmt.Errorf("thread %s: decode initial context: %w", t.ID, err)
	}
	return &t, nil
}

// turns reads the thread's turns at revision rev from index from up to
// until, on a reader.
func (s *Store) turns(ctx context.Context, id, rev string, from, until int) ([]memory.Turn, error) {
	st, err := s.reads.get(ctx, getTurns)
	if err != nil {
		return nil, err
	}
	return queryTurns(ctx, st, id, rev, from, until)
}

// queryTurns reads the thread's turns at revision rev from index from up
// to until with st (getTurns): memory.ErrWrittenAnew when the thread is no longer
// at rev, and finds fewer.
func queryTurns(ctx context.Context, st *sql.Stmt, id, rev string, from, until int) ([]memory.Turn, error) {
	rows, err := st.QueryContext(ctx, id, from, until, rev)
	if err != nil {
		return nil, describe(err)
	}
	turns, err := turnRows(rows, id, until-from)
	if err == nil && len(turns) != until-from {
		return nil, memory.ErrWrittenAnew
	}
	return turns, err
}

// turnRows decodes and closes the rows of getTurns, n of them expected.
func turnRows(rows *sql.Rows, id string, n int) ([]memory.Turn, error) {
	defer rows.Close()
	out := make([]memory.Turn, 0, n)
	for rows.Next() {
		var body sql.RawBytes
		var content string
		if err := rows.Scan(&body, &content); err != nil {
			return nil, describe(err)
		}
		var turn memory.Turn
		if err := json.Unmarshal(body, &turn); err != nil {
			return nil, fmt.Errorf("thread %s: decode turn: %w", id, err)
		}
		turn.Content = content
		out = append(out, turn)
	}
	return out, describe(rows.Err())
}
