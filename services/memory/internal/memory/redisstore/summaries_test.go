package redisstore

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// countedConn counts the bytes a connection reads.
type countedConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read.Add(int64(n))
	return n, err
}

// A listing reads a few fields of each thread and no more: not its turns,
// whose first prompt it shows cut (memory.Preview), nor its initial
// context. It read the thread's whole hash and its first two turns, and a
// client's listings of threads that start so took the server past 5 GB.
func TestAListingReadsNoTurns(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	var read atomic.Int64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return countedConn{conn, &read}, err
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Dialer: dial})
	s := New(rdb, "listed:", false)
	defer s.Close()
	ctx := t.Context()
	now := time.Now()
	prompt := strings.Repeat("é", 512<<10) // 1 MiB
	for range 10 {
		th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour), InitialContext: map[string]any{"prompt": prompt},
			Turns: []memory.Turn{{Role: memory.RoleUser, Content: prompt}, {Role: memory.RoleAssistant, Content: prompt}}}
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
	}
	before := read.Load()
	got, err := s.Summaries(ctx, memory.ListParams{Limit: 10}, now)
	listed := read.Load() - before
	if err != nil || len(got) != 10 || got[0].FirstPrompt != memory.Preview(prompt) {
		t.Fatalf("summaries %d, %v; want 10 showing the prompt's preview", len(got), err)
	}
	if listed > 64<<10 {
		t.Errorf("listing 10 threads whose first turns hold 1 MiB read %d KiB from Redis; want a few fields of each",
			listed>>10)
	}
}

// A thread an older version wrote has no card: a listing reads its hash
// and its first two turns, and shows its first prompt cut as a card's.
func TestAnOlderThreadIsListedFromItsTurns(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s, err := Open(srv.URL(), "older:", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	now := time.Now()
	prompt := strings.Repeat("ü", memory.PreviewRunes+1)
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "debug", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleAssistant, Content: "first"},
			{Role: memory.RoleUser, Content: prompt}}}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer raw.Close()
	if err := raw.HDel(ctx, s.metaKey(th.ID), "card", "prompt", "first").Err(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Summaries(ctx, memory.ListParams{Limit: 10}, now)
	if err != nil || len(got) != 1 || got[0].FirstPrompt != memory.Preview(prompt) || got[0].Thread.ToolName != "debug" ||
		got[0].TurnCount != 2 {
		t.Fatalf("summaries %+v, %v; want the thread, its 2 turns and its second turn's preview", got, err)
	}
}
