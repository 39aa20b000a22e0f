package sqlitestore

import (
	"context"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// rowCache keeps the threads' rows as the writer's connection last read or
// wrote them, so that a continued call's read, which follows its previous
// call's append, reads no row: with the turns memory.TurnCache keeps, it
// runs one statement, PRAGMA data_version, which changes when another
// connection (another process: the readers write nothing) has committed
// since it last ran. When it has, every row kept is dropped.
//
// Only whoever holds the writer (Store.writer) touches it: a read on the
// writer's connection, or the writer's transaction. What a transaction
// does to the rows waits in pending until it commits; a write rolled back
// to its savepoint takes its own changes back out.
type rowCache struct {
	version int64 // the writer connection's data_version when it last ran
	rows    map[string]*keptRow
	bytes   int // of the rows' initial contexts, as stored
	pending []rowChange
}

// maxRowBytes bounds the initial contexts the rows kept hold, as stored.
const maxRowBytes = 16 << 20

// rowOverhead is what a kept row costs besides its initial context.
const rowOverhead = 256

type keptRow struct {
	thread memory.Thread // without turns; the initial context is shared by every read, which reads it only
	count  int
	rev    string
	bytes  int
}

// rowChange is what a write did to a thread's row: moved it on, as an
// append does, or anything else, after which the row is read again. An
// empty id stands for every row. A move leaves the rest of the row as
// it was, and so leaves its revision: were it another process's (after
// that process replaced the thread), the next read would not use it, as
// data_version would have changed.
type rowChange struct {
	id               string
	moved            bool
	count            int
	updated, expires time.Time
}

// keptRow returns the thread's row as the writer's connection last saw
// it, when no other connection has committed since and the thread is live
// at now; the caller holds the writer. The thread returned is the
// caller's, but for its initial context.
func (s *Store) keptRow(ctx context.Context, id string, now time.Time) (t *memory.Thread, count int, rev string,
	ok bool, err error) {
	var version int64
	if err := s.writes.dataVersion.QueryRowContext(ctx).Scan(&version); err != nil {
		return nil, 0, "", false, describe(err)
	}
	c := &s.rows
	if version != c.version {
		c.version = version
		c.forgetAll()
		return nil, 0, "", false, nil
	}
	row, found := c.rows[id]
	if !found || !row.thread.ExpiresAt.After(now) {
		return nil, 0, "", false, nil
	}
	thread := row.thread
	return &thread, row.count, row.rev, true, nil
}

// keep records a row the writer's connection has just read, after
// keptRow found none; bytes is the size of its initial context as stored.
func (c *rowCache) keep(t *memory.Thread, count int, rev string, bytes int) {
	bytes += rowOverhead
	if bytes > maxRowBytes/4 {
		return // one thread never takes over the rows kept
	}
	c.forget(t.ID)
	for id := range c.rows {
		if c.bytes+bytes <= maxRowBytes {
			break
		}
		c.forget(id) // any: a map's order is as good as another here
	}
	if c.rows == nil {
		c.rows = map[string]*keptRow{}
	}
	row := &keptRow{thread: *t, count: count, rev: rev, bytes: bytes}
	row.thread.Turns = nil
	c.rows[t.ID] = row
	c.bytes += bytes
}

func (c *rowCache) forget(id string) {
	if row, ok := c.rows[id]; ok {
		c.bytes -= row.bytes
		delete(c.rows, id)
	}
}

func (c *rowCache) forgetAll() {
	clear(c.rows)
	c.bytes = 0
}

// change records what the open transaction did to a row.
func (c *rowCache) change(ch rowChange) { c.pending = append(c.pending, ch) }

// mark is where a savepoint's changes begin; undo takes them back out
// when it is rolled back to.
func (c *rowCache) mark() int { return len(c.pending) }

func (c *rowCache) undo(mark int) { c.pending = c.pending[:mark] }

// committed applies the changes of the transaction that has committed.
func (c *rowCache) committed() {
	for _, ch := range c.pending {
		row, ok := c.rows[ch.id]
		switch {
		case ch.id == "":
			c.forgetAll()
		case !ok:
		case ch.moved:
			row.count, row.thread.UpdatedAt, row.thread.ExpiresAt = ch.count, ch.updated, ch.expires
		default:
			c.forget(ch.id)
		}
	}
	c.pending = c.pending[:0]
}

// rolledBack drops the changes of a transaction that did not commit. One
// whose COMMIT failed may have committed nonetheless: every row is dropped.
func (c *rowCache) rolledBack(commitFailed bool) {
	c.pending = c.pending[:0]
	if commitFailed {
		c.forgetAll()
	}
}
