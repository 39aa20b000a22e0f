package sqlitestore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// Writes that queue while another is in its transaction are committed
// together (group commit): the writes then queued run in one transaction,
// each in a savepoint of its own, so that one write's failure undoes only
// its own statements. A commit writes to the WAL every page the
// transaction changed, once: the pages a thread's row, the recent-threads
// index and the turns share are written once for the group, not once for
// each of its writes. A write returns once the transaction that holds it
// has committed, or with why it did not. The price: a write's answer
// waits for the statements of the writes grouped with it, and a group
// holds the file's lock longer than any one of its writes would.

// maxGroup bounds the writes one transaction holds.
const maxGroup = 64

// writeJob is one write waiting for its transaction, or in it.
type writeJob struct {
	ctx   context.Context
	fn    func(ctx context.Context) error
	long  bool         // writeLong's: run alone, its statements end with ctx
	state atomic.Int32 // jobQueued, then jobStarted or jobAbandoned
	done  chan error   // buffered: the writer never waits for the caller
}

const (
	jobQueued int32 = iota
	jobStarted
	jobAbandoned // its caller has gone: it is never started
)

// start claims a queued write for a transaction.
func (j *writeJob) start() bool { return j.state.CompareAndSwap(jobQueued, jobStarted) }

// abandon takes a write its caller no longer waits for out of the queue.
func (j *writeJob) abandon() bool { return j.state.CompareAndSwap(jobQueued, jobAbandoned) }

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

// write runs fn in a transaction on the writer connection, which holds
// the write lock from its start (BEGIN IMMEDIATE); fn runs the writer's
// statements with the context it is given, one that does not end with the
// caller's (statementContext). A caller that finds the connection free
// takes the queue's oldest writes: its own alone it runs itself, as every
// write ran before writes were grouped; a group it runs apart, so that it
// can still leave while the group waits for another process's lock. Every
// caller waits for its outcome, or gives up when its context ends before
// its write has started.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.enqueue(&writeJob{ctx: ctx, fn: fn, done: make(chan error, 1)})
}

// writeLong is write for a write that may run long (an import, a sweep):
// when it runs alone, its statements run with its caller's context, so a
// caller that gives up ends it and it is rolled back. (In a group no
// write's statements are interrupted: see inSavepoint.)
func (s *Store) writeLong(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.enqueue(&writeJob{ctx: ctx, fn: fn, long: true, done: make(chan error, 1)})
}

func (s *Store) enqueue(j *writeJob) error {
	if err := s.refuseWhenGone(); err != nil {
		return err
	}
	ctx := j.ctx
	if err := ctx.Err(); err != nil {
		return err
	}
	s.queue.add(j)
	for {
		select {
		case err := <-j.done:
			return err
		case s.writer <- struct{}{}:
			group := s.queue.take()
			if len(group) == 1 && group[0] == j {
				s.commitGroup(group)
				<-s.writer
				return <-j.done
			}
			go func() {
				defer func() { <-s.writer }()
				s.commitGroup(group)
			}()
		case <-ctx.Done():
			if j.abandon() {
				return ctx.Err()
			}
			return <-j.done // started: it ends with its transaction
		}
	}
}

// commitGroup runs group's writes in one transaction and tells each its
// outcome. A group of one runs without a savepoint, its BEGIN with its
// caller's context.
func (s *Store) commitGroup(group []*writeJob) {
	queued := 0
	for _, j := range group {
		if j.state.Load() == jobQueued {
			queued++
		}
	}
	switch {
	case queued == 0:
		return // every caller has gone: nothing to begin
	case len(group) == 1:
		j := group[0]
		if j.start() {
			ctx := statementContext(j.ctx)
			if j.long {
				ctx = j.ctx
			}
			j.done <- s.transact(j.ctx, func() error { return j.fn(ctx) })
		}
		return
	}
	ctx, stop := whileAnyWaits(group)
	defer stop()
	outcome := make(map[*writeJob]error, len(group))
	var culprit *writeJob
	var culpritErr error
	err := s.transact(ctx, func() error {
		for _, j := range group {
			if !j.start() {
				continue
			}
			fnErr, txErr := s.inSavepoint(j)
			if txErr != nil {
				culprit, culpritErr = j, errors.Join(fnErr, txErr)
				return txErr
			}
			outcome[j] = fnErr
		}
		return nil
	})
	if culprit != nil {
		s.retryWithout(group, culprit, culpritErr)
		return
	}
	for _, j := range group {
		// Writes the transaction never reached (it failed to begin or to
		// commit) fail with it, unless their callers left.
		if j.state.Load() != jobStarted && !j.start() {
			continue
		}
		if err != nil {
			j.done <- err
		} else {
			j.done <- outcome[j]
		}
	}
}

// retryWithout answers the write whose statement made SQLite end the
// group's transaction (a full disk, an I/O error, ON CONFLICT ROLLBACK)
// with that error, and runs the others again, since their statements
// went with it.
func (s *Store) retryWithout(group []*writeJob, culprit *writeJob, err error) {
	culprit.done <- err
	again := make([]*writeJob, 0, len(group)-1)
	for _, j := range group {
		if j != culprit && (j.state.CompareAndSwap(jobStarted, jobQueued) || j.state.Load() == jobQueued) {
			again = append(again, j)
		}
	}
	s.commitGroup(again)
}

// inSavepoint runs j's statements in a savepoint: released when they
// succeed, rolled back to when they fail (fnErr). txErr says the
// transaction itself failed: the savepoint could not be taken, released
// or rolled back to.
func (s *Store) inSavepoint(j *writeJob) (fnErr, txErr error) {
	// Not interrupted by its caller's context: SQLite rolls back the whole
	// transaction when a statement in it is interrupted, the other
	// writes' too.
	ctx := statementContext(j.ctx)
	if _, err := s.writes.savepoint.ExecContext(ctx); err != nil {
		return nil, describe(err)
	}
	mark := s.rows.mark()
	if fnErr = j.fn(ctx); fnErr != nil {
		s.rows.undo(mark)
		if _, err := s.writes.rollbackTo.ExecContext(ctx); err != nil {
			return fnErr, describe(err)
		}
	}
	if _, err := s.writes.release.ExecContext(ctx); err != nil {
		return fnErr, describe(err)
	}
	return fnErr, nil
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

// statementContext is the context for statements that wait for nothing:
// a write's, once its transaction holds the lock, and a point read's. One
// that can end costs a goroutine a statement (the driver's, to interrupt
// it) and another a query (database/sql's, to close its rows), a sixth of
// a short statement's time, for statements that end in microseconds
// anyway. Only the wait for another process's lock is worth leaving (a
// write's BEGIN keeps its caller's context): a reader comes free as soon
// as another read ends.
func statementContext(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// transact runs fn in a transaction on the writer connection, which holds
// the write lock from its start (BEGIN IMMEDIATE).
func (s *Store) transact(ctx context.Context, fn func() error) error {
	if _, err := s.writes.begin.ExecContext(ctx); err != nil {
		s.rollback() // the driver reports a BEGIN that ran as failed when ctx ended meanwhile
		return describe(err)
	}
	s.transactions.Add(1)
	if err := fn(); err != nil {
		s.rollback()
		s.rows.rolledBack(false)
		return err
	}
	// A COMMIT that ran must not be reported as failed, as the driver
	// reports any statement it ran while ctx ended: ctx does not interrupt
	// it. Holding the write lock, it waits for no other writer.
	if _, err := s.writes.commit.ExecContext(statementContext(ctx)); err != nil {
		s.rollback()
		s.rows.rolledBack(true)
		return describe(err)
	}
	s.rows.committed()
	return nil
}

// rollback ends the writer's transaction, if one is open (when none is,
// ROLLBACK fails, harmlessly).
func (s *Store) rollback() { _, _ = s.writes.rollback.ExecContext(context.Background()) }
