package sqlitestore

import (
	"context"
	"sync"
	"sync/atomic"
)

// Writes that queue while another is in its transaction are committed
// together (group commit): the next writer to take the connection runs
// every write then queued in one transaction, each in a savepoint of its
// own, so that one write's failure undoes only its own statements. A
// commit writes to the WAL every page the transaction changed, once: the
// pages a thread's row, the recent-threads index and the turns share are
// written once for the group, not once for each of its writes. A write
// returns once the transaction that holds it has committed, or with why it
// did not.

// maxGroup bounds the writes one transaction holds.
const maxGroup = 64

// writeJob is one write waiting for its transaction, or in it.
type writeJob struct {
	ctx   context.Context
	fn    func(ctx context.Context) error
	state atomic.Int32 // jobQueued, then jobStarted or jobAbandoned
	done  chan error   // buffered: the writer never waits for the caller
	ended bool         // done has been given the outcome (the leader's alone)
}

const (
	jobQueued int32 = iota
	jobStarted
	jobAbandoned // its caller has gone: it is never started
)

// writeQueue holds the writes waiting for the writer connection.
type writeQueue struct {
	mu   sync.Mutex
	jobs []*writeJob
}

func (q *writeQueue) add(j *writeJob) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = append(q.jobs, j)
}

// take removes and returns the oldest writes, at most maxGroup.
func (q *writeQueue) take() []*writeJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.jobs), maxGroup)
	group := q.jobs[:n:n]
	q.jobs = q.jobs[n:]
	if len(q.jobs) == 0 {
		q.jobs = nil // let the array go
	}
	return group
}

func (q *writeQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs)
}

// write runs fn in a transaction on the writer connection, which holds
// the write lock from its start (BEGIN IMMEDIATE); fn runs the writer's
// statements with the context it is given. The caller whose write finds
// the connection free runs the queue's writes, its own among them; the
// others wait for their outcome, or give up when their context ends
// before their write has started.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j := &writeJob{ctx: ctx, fn: fn, done: make(chan error, 1)}
	s.queue.add(j)
	select {
	case err := <-j.done:
		return err
	case s.writer <- struct{}{}:
		// Every write queued before this one has ended or is in the
		// queue: the writer was free, so none is in a transaction.
		for !j.ended {
			s.commitGroup(s.queue.take())
		}
		<-s.writer
		return <-j.done
	case <-ctx.Done():
		if j.state.CompareAndSwap(jobQueued, jobAbandoned) {
			return ctx.Err()
		}
		return <-j.done // started: it ends with its transaction
	}
}

// commitGroup runs group's writes in one transaction and tells each its
// outcome. A group of one runs as a write on its own always did: with its
// caller's context, and no savepoint.
func (s *Store) commitGroup(group []*writeJob) {
	if len(group) == 1 {
		j := group[0]
		if j.state.CompareAndSwap(jobQueued, jobStarted) {
			s.end(j, s.transact(j.ctx, func() error { return j.fn(j.ctx) }))
		}
		return
	}
	ctx, stop := whileAnyWaits(group)
	defer stop()
	outcome := make(map[*writeJob]error, len(group))
	err := s.transact(ctx, func() error {
		for _, j := range group {
			if !j.state.CompareAndSwap(jobQueued, jobStarted) {
				continue
			}
			if err := j.ctx.Err(); err != nil {
				outcome[j] = err // as a write on its own would fail
				continue
			}
			intact, err := s.inSavepoint(j)
			if !intact {
				return err // the transaction is gone with it: SQLite ended it
			}
			outcome[j] = err
		}
		return nil
	})
	for _, j := range group {
		// Writes the transaction never reached (it failed to begin, or
		// ended before them) fail with it, unless their callers left.
		if j.state.Load() != jobStarted && !j.state.CompareAndSwap(jobQueued, jobStarted) {
			continue // its caller has gone
		}
		if err != nil {
			s.end(j, err)
		} else {
			s.end(j, outcome[j])
		}
	}
}

// inSavepoint runs j's statements in a savepoint: released when they
// succeed, rolled back to when they fail. intact is false when the
// savepoint could not be taken, released or rolled back to, which means
// the transaction itself failed; err then says why.
func (s *Store) inSavepoint(j *writeJob) (intact bool, err error) {
	// Not interrupted by its caller's context: SQLite rolls back the whole
	// transaction when a statement in it is interrupted, the other
	// writes' too. Holding the lock, its statements wait for nothing.
	ctx := context.WithoutCancel(j.ctx)
	if _, err := s.writes.savepoint.ExecContext(ctx); err != nil {
		return false, describe(err)
	}
	if err := j.fn(ctx); err != nil {
		if _, rerr := s.writes.rollbackTo.ExecContext(ctx); rerr != nil {
			return false, describe(rerr)
		}
		if _, rerr := s.writes.release.ExecContext(ctx); rerr != nil {
			return false, describe(rerr)
		}
		return true, err
	}
	if _, err := s.writes.release.ExecContext(ctx); err != nil {
		return false, describe(err)
	}
	return true, nil
}

// end gives j its outcome.
func (s *Store) end(j *writeJob, err error) {
	j.ended = true
	j.done <- err
}

// whileAnyWaits is a context that ends once every write of group has lost
// its caller's context: the transaction's BEGIN waits for another
// process's lock only while some write still wants it.
func whileAnyWaits(group []*writeJob) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var waiting atomic.Int64
	waiting.Store(int64(len(group)))
	stops := make([]func() bool, len(group))
	for i, j := range group {
		stops[i] = context.AfterFunc(j.ctx, func() {
			if waiting.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// transact runs fn in a transaction on the writer connection, which holds
// the write lock from its start (BEGIN IMMEDIATE).
func (s *Store) transact(ctx context.Context, fn func() error) error {
	s.transactions.Add(1)
	if _, err := s.writes.begin.ExecContext(ctx); err != nil {
		s.rollback() // the driver reports a BEGIN that ran as failed when ctx ended meanwhile
		return describe(err)
	}
	if err := fn(); err != nil {
		s.rollback()
		return err
	}
	// A COMMIT that ran must not be reported as failed, as the driver
	// reports any statement it ran while ctx ended: ctx does not interrupt
	// it. Holding the write lock, it waits for no other writer.
	if _, err := s.writes.commit.ExecContext(context.WithoutCancel(ctx)); err != nil {
		s.rollback()
		return describe(err)
	}
	return nil
}

// rollback ends the writer's transaction, if one is open (when none is,
// ROLLBACK fails, harmlessly).
func (s *Store) rollback() { _, _ = s.writes.rollback.ExecContext(context.Background()) }
