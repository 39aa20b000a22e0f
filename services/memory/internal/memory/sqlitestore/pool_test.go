package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// Connections are opened once: callers beyond the pool wait for one
// instead of opening and closing connections of their own, and the writer
// never holds more than one.
func TestConnectionsAreKept(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q"}}}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				if _, err := s.Get(ctx, th.ID, now); err != nil {
					t.Error(err)
				}
				turn := []memory.Turn{{Role: memory.RoleAssistant, Content: "a"}}
				if _, err := s.Append(ctx, th.ID, "", memory.Exchange{}, turn, 1000, now,
					now.Add(time.Hour)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	r, w := s.r.Stats(), s.w.Stats()
	if r.MaxIdleClosed+r.MaxLifetimeClosed+r.MaxIdleTimeClosed > 0 || r.OpenConnections > r.MaxOpenConnections {
		t.Errorf("readers: %+v, want none closed and at most %d open", r, r.MaxOpenConnections)
	}
	if w.MaxIdleClosed+w.MaxLifetimeClosed+w.MaxIdleTimeClosed > 0 || w.OpenConnections != 1 {
		t.Errorf("writer: %+v, want one connection, never closed", w)
	}
}

// A file written before files_until, rev, weight and turns.exchange_id
// existed gains the columns when a store opens it, its threads get a
// revision and about the weight they would have been written with (their
// turns and initial context as stored, and memory.ValueWeight a turn: they
// counted from nothing, and reads made room for none of them), they read
// and grow as before, and a retry of an exchange the older version
// recorded (in the exchanges table) stores nothing again.
func TestAnOlderFileGainsTheColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	older := strings.Replace(schema,
		",\n\tfiles_until     INTEGER NOT NULL DEFAULT 0,\n\trev             TEXT NOT NULL DEFAULT '',"+
			"\n\tweight          INTEGER NOT NULL DEFAULT 0", "", 1)
	older = strings.Replace(older, "\texchange_id TEXT NOT NULL DEFAULT '',\n", "", 1)
	if strings.Contains(older, "files_until") || strings.Contains(older, "weight") ||
		strings.Contains(older, "exchange_id TEXT NOT NULL DEFAULT") {
		t.Fatal("the schema no longer declares files_until, rev, weight and turns.exchange_id as this test expects")
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	id := uuid.NewString()
	for _, q := range []string{older,
		`INSERT INTO threads (id, tool_name, created_at, updated_at, expires_at, turn_count) VALUES (?, 'chat', ?, ?, ?, 1)`,
		`INSERT INTO turns (thread_id, seq, body) VALUES (?, 0, '{"role":1,"content":"before"}')`,
		`INSERT INTO exchanges (thread_id, exchange_id) VALUES (?, 'x-old')`,
	} {
		args := []any{id, nanos(now), nanos(now), nanos(now.Add(time.Hour))}
		if _, err := db.Exec(q, args[:strings.Count(q, "?")]...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := open(t, path)
	ctx := context.Background()
	var unnamed int
	if err := s.wc.QueryRowContext(ctx, `SELECT count(*) FROM threads WHERE rev = ''`).Scan(&unnamed); err != nil ||
		unnamed != 0 {
		t.Errorf("threads without a revision after opening: %d, %v", unnamed, err)
	}
	stored := int64(len(`{"role":1,"content":"before"}`) + memory.ValueWeight + len("null"))
	if head, _, err := s.Head(ctx, id, now); err != nil || head.Weight != stored {
		t.Errorf("an older thread: %+v, %v; want it weighing %d", head, err, stored)
	}
	after := []memory.Turn{{Role: memory.RoleAssistant, Content: "after"}}
	n, err := s.Append(ctx, id, "", memory.Exchange{ID: "x-new", Weight: 100}, after, 10, now, now.Add(time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("append to an older thread: %d, %v", n, err)
	}
	if head, _, err := s.Head(ctx, id, now); err != nil || head.Weight != stored+100 {
		t.Errorf("an older thread after an append of weight 100: %+v, %v; want it weighing %d", head, err, stored+100)
	}
	for _, ex := range []memory.Exchange{{ID: "x-old"}, {ID: "x-new", After: 1}} {
		if n, err := s.Append(ctx, id, "", ex, after, 10, now, now.Add(time.Hour)); err != nil || n != 2 {
			t.Errorf("retry of %s: %d, %v; want 2, nil", ex.ID, n, err)
		}
	}
	got, err := s.Get(ctx, id, now)
	if err != nil || len(got.Turns) != 2 || got.Turns[0].Content != "before" || got.Turns[1].Content != "after" {
		t.Fatalf("get: %+v, %v", got, err)
	}
	open(t, path) // a second opening finds the column there
}

// A file the version before turns.exchange_id wrote (it has every other
// column) gains that one: the migration does not stop at the first column
// it finds there already.
func TestTheLastVersionsFileGainsTheExchangeColumn(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	last := strings.Replace(schema, "\texchange_id TEXT NOT NULL DEFAULT '',\n", "", 1)
	if last == schema {
		t.Fatal("the schema no longer declares turns.exchange_id as this test expects")
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(last); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := open(t, path)
	ctx := context.Background()
	now := time.Now().UTC()
	th := chatThread(now)
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	turns := qa()
	for range 2 {
		if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, turns, 10, now,
			now.Add(time.Hour)); err != nil ||
			n != 2 {
			t.Fatalf("append, then its retry: %d, %v; want 2, nil", n, err)
		}
	}
}

// TestAnOlderFileLosesTheExpiryIndex: a file written before appends
// stopped keeping threads_expiry has it dropped when opened, and the sweep
// finds expired threads without it.
func TestAnOlderFileLosesTheExpiryIndex(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(schema + `CREATE INDEX threads_expiry ON threads (expires_at);`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s := open(t, path)
	ctx := context.Background()
	var n int
	if err := s.wc.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'threads_expiry'`).
		Scan(&n); err != nil || n != 0 {
		t.Fatalf("threads_expiry after opening: %d, %v", n, err)
	}
	now := time.Now().UTC()
	gone := chatThread(now.Add(-2 * time.Hour))
	gone.ExpiresAt = now.Add(-time.Hour)
	if err := s.Create(ctx, gone); err != nil { // the first create sweeps, before gone exists
		t.Fatal(err)
	}
	s.lastSweep = time.Time{}
	if err := s.Create(ctx, chatThread(now)); err != nil { // this one sweeps gone away
		t.Fatal(err)
	}
	if err := s.wc.QueryRowContext(ctx, `SELECT count(*) FROM threads WHERE id = ?`, gone.ID).Scan(&n); err != nil ||
		n != 0 {
		t.Errorf("the expired thread's row after a sweep: %d, %v", n, err)
	}
}

// A file written before initial_contexts existed has its threads' large
// initial contexts moved there when a store first opens it, and reads
// them as before; small ones stay in their rows.
func TestAnOlderFilesLargeInitialContextsMoveOut(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	start := strings.Index(schema, "-- A thread's initial context past")
	end := strings.Index(schema, "-- Older versions recorded")
	if start < 0 || end < start {
		t.Fatal("the schema no longer declares initial_contexts as this test expects")
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	contexts := map[string]map[string]any{
		uuid.NewString(): {"prompt": "small"},
		uuid.NewString(): {"prompt": strings.Repeat("large ", inlineContext)},
	}
	if _, err := db.Exec(schema[:start] + schema[end:]); err != nil {
		t.Fatal(err)
	}
	for id, initial := range contexts {
		body, err := memory.Encode(initial)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO threads (id, tool_name, created_at, updated_at, expires_at, initial_context)
			VALUES (?, 'chat', ?, ?, ?, ?)`, id, nanos(now), nanos(now), nanos(now.Add(time.Hour)), string(body)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	for range 2 { // the second opening finds them moved
		s := open(t, path)
		ctx := context.Background()
		var inRows, apart int
		err := s.wc.QueryRowContext(ctx, `SELECT count(*) FROM threads WHERE initial_context != ''`).Scan(&inRows)
		if err == nil {
			err = s.wc.QueryRowContext(ctx, `SELECT count(*) FROM initial_contexts`).Scan(&apart)
		}
		if err != nil || inRows != 1 || apart != 1 {
			t.Errorf("initial contexts in the threads' rows %d, apart %d (%v); want the small one in its row, "+
				"the large one apart", inRows, apart, err)
		}
		for id, want := range contexts {
			got, err := s.Get(ctx, id, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got.InitialContext); diff != "" {
				t.Errorf("thread %s's initial context (-want +got):\n%s", id, diff)
			}
		}
		s.Close()
	}
}
