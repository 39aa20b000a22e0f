package redisstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// fileSHAs lists the distinct files turns reference.
func fileSHAs(turns []memory.Turn) []any {
	seen := map[string]bool{}
	var out []any
	for _, t := range turns {
		for _, f := range t.Files {
			if f.SHA256 != "" && !seen[f.SHA256] {
				seen[f.SHA256] = true
				out = append(out, f.SHA256)
			}
		}
	}
	return out
}

// statesOf is, for each tool whose workflow state turns keep, the tool and
// the turn count its last state came with: the thread's `state:<tool>`
// fields, as appendScript writes them for the turns it appends, which
// refuse a step prepared before that state (memory.Exchange.Unchanged).
func statesOf(turns []memory.Turn) []any {
	last := map[string]int{}
	for i, t := range turns {
		if t.ToolName != "" && t.WorkflowState != nil {
			last[t.ToolName] = i + 1
		}
	}
	out := make([]any, 0, 2*len(last))
	for _, tool := range slices.Sorted(maps.Keys(last)) {
		out = append(out, tool, last[tool])
	}
	return out
}

// encodeTurns appends turns to a script's args as stored.
func (s *Store) encodeTurns(args []any, turns []memory.Turn) ([]any, error) {
	for _, turn := range turns {
		raw, err := memory.EncodeTurn(turn)
		if err != nil {
			return nil, fmt.Errorf("encode turn: %w", err)
		}
		enc, err := s.pack(raw)
		if err != nil {
			return nil, err
		}
		args = append(args, enc)
	}
	return args, nil
}

// put writes t, whose keys live from now until its ExpiresAt.
func (s *Store) put(ctx context.Context, t *memory.Thread, replace bool, now time.Time) error {
	rev := memory.NewRevision()
	m, err := memory.Encode(meta{ID: t.ID, ParentID: t.ParentID, ToolName: t.ToolName, ClientID: t.ClientID,
		CreatedAt: t.CreatedAt, InitialContext: t.InitialContext, Rev: rev})
	if err != nil {
		return fmt.Errorf("encode thread %s: %w", t.ID, err)
	}
	life := ttl(now, t.ExpiresAt)
	flag := "0"
	if replace {
		flag = "1"
	}
	c, err := listedCard(t)
	if err != nil {
		return err
	}
	shas := fileSHAs(t.Turns)
	args := []any{flag, life, string(m), strconv.FormatInt(t.UpdatedAt.UnixNano(), 10), t.ExpiresAt.UnixMilli(),
		t.ClientID, score(t.UpdatedAt), t.ID, t.UpdatedAt.UnixMilli(), t.Weight, len(shas), rev, c,
		memory.FirstPrompt(t.Turns), firstRole(t.Turns)}
	states := statesOf(t.Turns)
	args = append(append(args, len(states)), states...)
	if args, err = s.encodeTurns(append(args, shas...), t.Turns); err != nil {
		return err
	}
	created, err := putScript.Run(ctx, s.rdb, s.keys(t.ID, t.ClientID), args...).Int()
	if err != nil {
		return failure(err)
	}
	switch created {
	case 0:
		return fmt.Errorf("%w: %s", memory.ErrExists, t.ID)
	case -1:
		return fmt.Errorf("%w: %s", memory.ErrOwned, t.ID)
	}
	if s.oneServer {
		return nil // the script indexed it
	}
	// The thread is stored: an error now would have the client create
	// another. Indexing it is upkeep, tried twice, done even when the
	// caller has gone; failing, the thread is listed once written again.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), upkeepTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		pipe := s.rdb.Pipeline()
		s.index(ctx, pipe, t.ClientID, t.ID, t.UpdatedAt, t.ExpiresAt, t.UpdatedAt)
		_, err := pipe.Exec(ctx)
		if err == nil {
			return nil
		}
		if attempt == 2 || redis.IsOOMError(err) {
			s.logger.ErrorContext(ctx, "a thread was stored, but indexing it for its client's listings failed; "+
				"it is listed once it is written again", "thread", t.ID, "err", err)
			return nil
		}
	}
}

// Create writes t, created at its UpdatedAt (Service.Create's now).
func (s *Store) Create(ctx context.Context, t *memory.Thread) error {
	return s.put(ctx, t, false, t.UpdatedAt)
}

func (s *Store) Append(ctx context.Context, id, clientID string, ex memory.Exchange, turns []memory.Turn, maxTurns int,
	now, expiresAt time.Time) (int, error) {
	exchangeID := ex.ID // a set per thread: ex.After is needed only for Unchanged
	// The turns the call saw, when no other state of the tool may follow.
	unchanged := ""
	if ex.ChecksState() {
		unchanged = strconv.Itoa(ex.After)
	}
	life := ttl(now, expiresAt)
	// Files are kept a quarter TTL past the thread, so the appends in that
	// window need not touch them again.
	keepUntil := expiresAt.Add(time.Duration(life) * time.Millisecond / 4)
	shas := fileSHAs(turns)
	args := []any{maxTurns, now.UnixMilli(), strconv.FormatInt(now.UnixNano(), 10), expiresAt.UnixMilli(), life,
		clientID, keepUntil.UnixMilli(), exchangeID, score(now), id, len(shas), ex.Weight, memory.MaxThreadWeight,
		memory.FirstPrompt(turns), firstRole(turns), memory.FirstPromptAfter(turns), unchanged, ex.StateOf}
	args, err := s.encodeTurns(append(args, shas...), turns)
	if err != nil {
		return 0, err
	}
	// The revision this process saw the thread at before the script: the
	// script does not say which it appended to (see TurnCache.Appended).
	rev, _, _ := s.cache.Last(id)
	res, err := appendScript.Run(ctx, s.rdb, s.keys(id, clientID), args...).Slice()
	if err != nil {
		return 0, failure(err)
	}
	status, _ := res[0].(int64)
	count, _ := res[1].(int64)
	// The thread's files, and in Cluster its client's index, live in other
	// slots: extend and update them in one round trip after the atomic
	// append, when there is anything to do.
	pipe := s.rdb.Pipeline()
	switch status {
	case -3:
		return 0, s.missing(ctx, now)
	case -1:
		return 0, memory.ErrNotFound
	case -2:
		return int(count), memory.ErrTurnLimit
	case -4:
		return int(count), memory.ErrThreadFull
	case -5:
		return int(count), memory.ErrMoved
	case 1:
		if s.oneServer {
			return int(count), nil // the first attempt's script indexed it
		}
		// A retry: the first attempt may have failed after its append and
		// before this index update, so index it again, as stored.
		updated, _ := strconv.ParseInt(str(res[2]), 10, 64)
		expires, _ := strconv.ParseInt(str(res[3]), 10, 64)
		s.index(ctx, pipe, clientID, id, time.Unix(0, updated), time.UnixMilli(expires), now)
	default:
		// Onto cached turns that end in the turn Redis found before these
		// alone: another process may have appended where turns a Redis lost
		// were (tails.go). The last argument is the last turn as pushed.
		s.cache.Appended(id, rev, int(count)-len(turns), str(res[2]), turns, digest(args[len(args)-1].(string)))
		keepLife := ttl(now, keepUntil)
		for _, sha := range res[3:] {
			blobScript.Eval(ctx, pipe, []string{s.blobKey(str(sha))}, keepLife, keepUntil.UnixMilli(), "0", "", "")
		}
		if !s.oneServer {
			s.index(ctx, pipe, clientID, id, now, expiresAt, now)
		}
	}
	if pipe.Len() == 0 {
		return int(count), nil
	}
	// Upkeep of a stored exchange: done even when the caller has gone.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), upkeepTimeout)
	defer cancel()
	_, err = pipe.Exec(ctx)
	if err != nil && status == 0 && len(res) > 2 {
		// The script recorded the files as kept (files_ms) before they
		// were: forget it, so the next append keeps them.
		if err := s.rdb.HDel(ctx, s.metaKey(id), "files_ms").Err(); err != nil {
			s.logger.ErrorContext(ctx, "a thread's files may expire before it: recording that they are not "+
				"kept failed", "thread", id, "err", err)
		}
	}
	switch {
	case err == nil:
	case redis.IsOOMError(err):
		// The exchange is stored; a full Redis refuses the upkeep, and
		// would refuse a retry before its script could answer it as
		// stored. The thread's next append redoes it.
		s.logger.ErrorContext(ctx, "an exchange was stored, but Redis is full: keeping its thread's files "+
			"alive or indexing the thread failed; the thread's next append redoes it", "thread", id, "err", err)
	default:
		// The edge retries: answered as stored (status 1), the retry indexes
		// the thread again, and the next append keeps the files (files_ms).
		return int(count), failure(err)
	}
	return int(count), nil
}

// upkeepTimeout bounds the writes after a stored one, which run after its
// caller may have gone. Keeping 8,000 files alive is 8,000 scripts: on a
// busy server (a loaded CI machine's miniredis) that took over 5 s.
const upkeepTimeout = 15 * time.Second

func str(v any) string {
	s, _ := v.(string)
	return s
}

// Delete reads the thread's client and deletes its keys in one round trip
// (they share a slot, so the read comes first), then removes it from its
// client's index, which the thread's client names.
func (s *Store) Delete(ctx context.Context, id string) error {
	defer s.cache.Forget(id)
	pipe := s.rdb.Pipeline()
	owner, deleted := pipe.HGet(ctx, s.metaKey(id), "client"), pipe.Del(ctx, s.threadKeys(id)...)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return failure(err)
	}
	client := owner.Val()
	if deleted.Val() == 0 {
		return memory.ErrNotFound
	}
	// Only a listing misses the entry when this fails, and tidies it then.
	s.unindex(ctx, client, id)
	return nil
}

// Import checks every thread before it writes any, so a clash stores
// nothing. Each thread is written atomically; a Redis failure part way
// leaves the threads written so far, which an import with replace redoes.
func (s *Store) Import(ctx context.Context, threads []*memory.Thread, replace bool, now time.Time) error {
	pipe := s.rdb.Pipeline()
	owners := make([]*redis.StringCmd, len(threads))
	for i, t := range threads {
		owners[i] = pipe.HGet(ctx, s.metaKey(t.ID), "client")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return failure(err)
	}
	for i, t := range threads {
		// A thread's meta always has its client field (put writes it, ""
		// included), so a missing field means a missing thread.
		owner, err := owners[i].Result()
		if err := memory.ImportClash(t, owner, !errors.Is(err, redis.Nil), replace); err != nil {
			return err
		}
	}
	for _, t := range threads {
		if err := s.put(ctx, t, replace, now); err != nil {
			return err
		}
	}
	return nil
}
