package sqlitestore

import (
	"context"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// threadRow is what a thread's row holds: the thread without its turns,
// their count, and the thread's revision.
type threadRow struct {
	thread *memory.Thread
	count  int
	rev    string
}

// rowCache keeps the threads' rows the writer's connection read, as its
// own writes since then left them, so that a continued call's read, which
// follows its previous call's append, reads no row: with the turns
// memory.TurnCache keeps, it runs one statement, PRAGMA data_version,
// which changes when another connection (another process: the readers
// write nothing) has committed since the connection last ran it. When it
// has, every row kept is dropped.
//
// Only whoever holds the writer (Store.writer) touches it: a read on the
// writer's connection, or the writer's transaction. What a transaction
// does to the rows waits in pending until it commits; a write rolled back
// to its savepoint takes its own changes back out.
type rowCache struct {
	version int64 // the writer connection's data_version when it last ran
	// rows hold private threads, each read's copied from them; the initial
	// context is shared by every read, which reads it only.
	rows    *memory.Heads[threadRow]
	pending []rowChange
}

func newRowCache() rowCache {
	return rowCache{rows: memory.NewHeads[threadRow](memory.DefaultHeadBytes)}
}

// rowChange is what a write did to a thread's row: moved it on, as an
// append does, or anything else, after which the row is read again. An
// empty id stands for every row. A move leaves the rest of the row as it
// was, its revision included: were the row another process's, after that
// process replaced the thread, data_version would have changed, and the
// next read would not use it.
type rowChange struct {
	id               string
	moved            bool
	count            int
	weight           int64
	updated, expires time.Time
}

// kept returns the thread's row as the writer's connection last saw it,
// when no other connection has committed since and the thread is live at
// now (as getThread's expires_at > now would find it); the caller holds
// the writer. The thread returned is the caller's, but for its initial
// context.
func (s *Store) kept(ctx context.Context, id string, now time.Time) (threadRow, bool, error) {
	var version int64
	if err := s.writes.dataVersion.QueryRowContext(ctx).Scan(&version); err != nil {
		return threadRow{}, false, describe(err)
	}
	c := &s.rows
	if version != c.version {
		c.version = version
		c.rows.Clear()
		return threadRow{}, false, nil
	}
	row, ok := c.rows.Get(id)
	if !ok || !row.thread.ExpiresAt.After(now) {
		return threadRow{}, false, nil
	}
	thread := *row.thread
	row.thread = &thread
	return row, true, nil
}

// keep records a row the writer's connection has just read, after kept
// found none.
func (c *rowCache) keep(row threadRow) {
	thread := *row.thread
	thread.Turns = nil
	row.thread = &thread
	c.rows.Put(thread.ID, row, memory.HeadSize(&thread))
}

// change records what the open transaction did to a row.
func (c *rowCache) change(ch rowChange) { c.pending = append(c.pending, ch) }

// mark is where a savepoint's changes begin; undo takes them back out
// when it is rolled back to.
func (c *rowCache) mark() int { return len(c.pending) }

func (c *rowCache) undo(mark int) { c.pending = c.pending[:mark] }

// committed applies, in order, the changes of the transaction that has
// committed.
func (c *rowCache) committed() {
	for _, ch := range c.pending {
		switch {
		case ch.id == "":
			c.rows.Clear()
		case ch.moved:
			c.rows.Update(ch.id, func(row *threadRow) {
				row.count, row.thread.UpdatedAt, row.thread.ExpiresAt = ch.count, ch.updated, ch.expires
				row.thread.Weight = ch.weight
			})
		default:
			c.rows.Forget(ch.id)
		}
	}
	c.pending = c.pending[:0]
}

// rolledBack drops the changes of a transaction that did not commit. One
// whose COMMIT failed may have committed nonetheless: every row is dropped.
func (c *rowCache) rolledBack(commitFailed bool) {
	c.pending = c.pending[:0]
	if commitFailed {
		c.rows.Clear()
	}
}
