package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// A listing shows of each thread its meta without the initial context,
// its times, its turn count and the preview of its first prompt. A
// thread's hash keeps those apart from the meta and the turns (put writes
// them; an append keeps the prompt as the first turns come), so that a
// listing reads a few short fields of each thread, whatever its initial
// context and its first turns hold: it read both whole, and a client's
// listings of threads that start with prompts of 2 MiB took the server
// past 5 GB. A thread an older version wrote has no card, and is listed
// as before.
//
// Hash fields: card, the meta without its initial context (JSON); prompt,
// memory.FirstPrompt of the thread's turns; first, the role of its first
// turn ("" for none), which tells an append to a thread of one turn
// whether that turn held the first prompt.

// userRole is memory.RoleUser as the hash's first field holds it.
var userRole = strconv.Itoa(int(memory.RoleUser))

// listedCard is t's card.
func listedCard(t *memory.Thread) (string, error) {
	c, err := memory.Encode(meta{ID: t.ID, ParentID: t.ParentID, ToolName: t.ToolName, ClientID: t.ClientID,
		CreatedAt: t.CreatedAt})
	if err != nil {
		return "", fmt.Errorf("encode thread %s: %w", t.ID, err)
	}
	return string(c), nil
}

// firstRole is the hash's first field for a thread whose turns begin with
// turns.
func firstRole(turns []memory.Turn) string {
	if len(turns) == 0 {
		return ""
	}
	return strconv.Itoa(int(turns[0].Role))
}

// listScript reads what a listing shows of a thread: {0, its card, prompt,
// updated_ns, expires_ms and weight, its turn count}, or for a thread
// without a card {1, its hash, its turn count, its first two turns}.
// KEYS: metaKey, turnsKey.
var listScript = redis.NewScript(`
local f = redis.call('HMGET', KEYS[1], 'card', 'prompt', 'updated_ns', 'expires_ms', 'weight')
if f[1] then return {0, f, redis.call('LLEN', KEYS[2])} end
return {1, redis.call('HGETALL', KEYS[1]), redis.call('LLEN', KEYS[2]), redis.call('LRANGE', KEYS[2], 0, 1)}
`)

// listedReply takes listScript's reply apart: the thread without its
// turns, as a listing shows it (memory.ErrNotFound when it is gone), its
// turn count and first prompt.
func (s *Store) listedReply(ctx context.Context, cmd *redis.Cmd, id string, now time.Time) (listed, error) {
	reply, err := cmd.Slice()
	if err != nil {
		return listed{}, failure(err)
	}
	if len(reply) == 4 && reply[0] == int64(1) {
		meta, count, turns, err := threadReply(redis.NewCmdResult(reply[1:], nil))
		if err != nil {
			return listed{}, err
		}
		t, err := s.decode(ctx, id, meta, turns, now)
		if err != nil {
			return listed{}, err
		}
		prompt := memory.FirstPrompt(t.Turns)
		t.Turns = nil
		return listed{thread: t, turns: count, prompt: prompt}, nil
	}
	bad := fmt.Errorf("thread %s: the listing's script answered %v, not a thread's card", id, reply)
	if len(reply) != 3 || reply[0] != int64(0) {
		return listed{}, bad
	}
	fields, ok1 := reply[1].([]any)
	count, ok2 := reply[2].(int64)
	if !ok1 || !ok2 || len(fields) != 5 {
		return listed{}, bad
	}
	field := func(i int) string { v, _ := fields[i].(string); return v }
	hf := hashFields{updatedNs: field(2), expiresMs: field(3), weight: field(4)}
	if hf.expired(now) {
		return listed{}, memory.ErrNotFound
	}
	var m meta // not the meta cache's: a card is not the meta reads hold
	if err := json.Unmarshal([]byte(field(0)), &m); err != nil {
		return listed{}, fmt.Errorf("thread %s: decode its card: %w", id, err)
	}
	t := hf.thread(m)
	return listed{thread: &t, turns: count, prompt: field(1)}, nil
}
