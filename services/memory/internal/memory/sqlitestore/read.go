package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

const (
	getThread = `SELECT ` + threadColumns + `, turn_count, rev, weight FROM threads WHERE id = ? AND expires_at > ?`
	// SQLite takes the content out of the turn's JSON faster than
	// encoding/json reads it. The turns are read from the thread's row at
	// revision ?4, the one the read found: in another statement, the row
	// and the turns may be two versions'. No row at all means the thread
	// is no longer at that revision; a row without a turn (its third
	// column false), that it has no turns in the range.
	getTurns = `SELECT json_remove(t.body, '$.content'), coalesce(json_extract(t.body, '$.content'), ''),
			t.seq IS NOT NULL
		FROM threads h LEFT JOIN turns t ON t.thread_id = h.id AND t.seq >= ?2 AND t.seq < ?3
		WHERE h.id = ?1 AND h.rev = ?4
		ORDER BY t.seq`
)

// Get reads the thread on the writer's connection when no write holds it,
// else on a reader. SQLite drops a connection's page cache whenever
// another connection has written since its last read: under appends a
// reader fetches every page of a read from the file again (nine reads a
// Get, measured), while the writer's cache holds the pages it wrote.
func (s *Store) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	t, _, err := s.GetWithin(ctx, id, now, math.MaxInt64)
	return t, err
}

// GetWithin reads the thread as Get does, unless its row says it weighs
// more than max.
func (s *Store) GetWithin(ctx context.Context, id string, now time.Time, max int64) (*memory.Thread, bool, error) {
	read, err := memory.ReadAgain(ctx, func() (within, error) { return s.get(ctx, id, now, max) })
	return read.thread, read.heavier, err
}

// within is what GetWithin read.
type within struct {
	thread  *memory.Thread
	heavier bool // thread is its head alone
}

// get is one attempt of GetWithin.
func (s *Store) get(ctx context.Context, id string, now time.Time, max int64) (within, error) {
	select {
	case s.writer <- struct{}{}:
		return s.getOnWriter(ctx, id, now, max)
	default:
	}
	release, err := s.reads.take(ctx)
	if err != nil {
		return within{}, err
	}
	defer release()
	ctx = statementContext(ctx)
	row, err := s.rowOnReader(ctx, id, now)
	if err != nil || row.thread.Weight > max {
		return within{row.thread, err == nil}, err
	}
	t, err := s.withTurns(row, func(from int) ([]memory.Turn, error) {
		return s.turns(ctx, id, row.rev, from, row.count)
	})
	return within{thread: t}, err
}

// rowOnReader reads the thread's row on a reader, whose slot the caller
// holds.
func (s *Store) rowOnReader(ctx context.Context, id string, now time.Time) (threadRow, error) {
	thread, err := s.reads.get(ctx, getThread)
	if err != nil {
		return threadRow{}, err
	}
	return s.readRow(ctx, thread, id, now)
}

// rowOnWriter is the thread's row on the writer's connection, which the
// caller holds: the one it kept (rows.go), else read and kept.
func (s *Store) rowOnWriter(ctx context.Context, id string, now time.Time) (threadRow, error) {
	row, ok, err := s.kept(ctx, id, now)
	if err != nil || ok {
		return row, err
	}
	if row, err = s.readRow(ctx, s.writes.getThread, id, now); err != nil {
		return threadRow{}, err
	}
	s.rows.keep(row)
	return row, nil
}

// Head reads the thread's row as Get does: on the writer's connection when
// it is free, where the row a continued call's append left is kept, and so
// a page polling for changes reads no row; else on a reader.
func (s *Store) Head(ctx context.Context, id string, now time.Time) (*memory.Thread, int, error) {
	var row threadRow
	select {
	case s.writer <- struct{}{}:
		defer func() { <-s.writer }()
		var err error
		if row, err = s.rowOnWriter(statementContext(ctx), id, now); err != nil {
			return nil, 0, err
		}
	default:
		release, err := s.reads.take(ctx)
		if err != nil {
			return nil, 0, err
		}
		defer release()
		if row, err = s.rowOnReader(statementContext(ctx), id, now); err != nil {
			return nil, 0, err
		}
	}
	return row.thread, row.count, nil
}

// getOnWriter is Get on the writer's connection, which the caller has
// taken: it reads the row, unless the writer's connection has kept it
// (rows.go), and up to writerTurns turns the process does not hold yet
// (another process's appends). More (a thread first read since a restart)
// are read on a reader once the writer is given back, so that a long read
// does not hold up the writes.
func (s *Store) getOnWriter(ctx context.Context, id string, now time.Time, max int64) (within, error) {
	held := true
	giveBack := func() {
		if held {
			held = false
			<-s.writer
		}
	}
	defer giveBack()
	sctx := statementContext(ctx)
	row, err := s.rowOnWriter(sctx, id, now)
	if err != nil || row.thread.Weight > max {
		return within{row.thread, err == nil}, err
	}
	t, err := s.withTurns(row, func(from int) ([]memory.Turn, error) {
		if row.count-from <= writerTurns {
			return queryTurns(sctx, s.writes.getTurns, id, row.rev, from, row.count)
		}
		giveBack()
		release, err := s.reads.take(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		return s.turns(sctx, id, row.rev, from, row.count)
	})
	return within{thread: t}, err
}

// writerTurns is the most turns a read on the writer's connection reads
// from the file.
const writerTurns = 16

// readRow reads the thread's row with thread (getThread).
func (s *Store) readRow(ctx context.Context, thread *sql.Stmt, id string, now time.Time) (threadRow, error) {
	s.rowReads.Add(1)
	var row threadRow
	var weight int64
	t, err := scanThread(thread.QueryRowContext(ctx, id, nanos(now)), &row.count, &row.rev, &weight)
	if errors.Is(err, sql.ErrNoRows) {
		return threadRow{}, memory.ErrNotFound
	}
	if err != nil {
		return threadRow{}, describe(err)
	}
	t.Weight, row.thread = weight, t
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
	cols := []any{&t.ID, &t.ParentID, &t.ToolName, &t.ClientID, &created, &updated, &expires, &initial}
	cols = append(cols, more...)
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
// to until with st (getTurns). A thread no longer at rev is
// memory.ErrWrittenAnew; one at rev that lacks some of the turns its row
// counts is damaged.
func queryTurns(ctx context.Context, st *sql.Stmt, id, rev string, from, until int) ([]memory.Turn, error) {
	rows, err := st.QueryContext(ctx, id, from, until, rev)
	if err != nil {
		return nil, describe(err)
	}
	turns, atRev, err := turnRows(rows, id, until-from)
	switch {
	case err != nil:
		return nil, err
	case !atRev:
		return nil, fmt.Errorf("thread %s: %w", id, memory.ErrWrittenAnew)
	case len(turns) != until-from:
		return nil, fmt.Errorf("thread %s: the store holds %d of its turns %d to %d, which its row counts: the "+
			"thread is damaged (export what is left, or delete it)", id, len(turns), from, until-1)
	}
	return turns, nil
}

// turnRows decodes and closes the rows of getTurns, n turns expected, and
// says whether the thread was found at the revision asked for.
func turnRows(rows *sql.Rows, id string, n int) (turns []memory.Turn, atRev bool, err error) {
	defer rows.Close()
	out := make([]memory.Turn, 0, n)
	for rows.Next() {
		atRev = true
		var body sql.RawBytes
		var content string
		var isTurn bool
		if err := rows.Scan(&body, &content, &isTurn); err != nil {
			return nil, false, describe(err)
		}
		if !isTurn {
			continue
		}
		var turn memory.Turn
		if err := json.Unmarshal(body, &turn); err != nil {
			return nil, false, fmt.Errorf("thread %s: decode turn: %w", id, err)
		}
		turn.Content = content
		out = append(out, turn)
	}
	return out, atRev, describe(rows.Err())
}
