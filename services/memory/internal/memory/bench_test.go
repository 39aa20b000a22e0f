package memory_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/redisstore"
	"github.com/zenmcp/zen/services/memory/internal/memory/sqlitestore"
	"github.com/zenmcp/zen/services/platform/latency"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// sourceText returns n bytes of this repository's Go code: realistic text
// for token counts and compression.
func sourceText(b *testing.B, n int) string {
	b.Helper()
	var sb strings.Builder
	_ = filepath.WalkDir("../../..", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && sb.Len() < 4*n {
			data, _ := os.ReadFile(p)
			sb.Write(data)
		}
		return nil
	})
	all := sb.String()
	for len(all) < n {
		all += all
	}
	return all
}

// bigThread writes a thread of 50 turns whose first 20 user turns each
// share a different 50 KB file, and returns its id.
func bigThread(b *testing.B, svc *memory.Service) string { return thread(b, svc, 25) }

// thread writes a thread of 2*exchanges turns whose first 20 user turns
// each share a different 50 KB file.
func thread(b *testing.B, svc *memory.Service, exchanges int) string {
	b.Helper()
	ctx := context.Background()
	text := sourceText(b, 20*50_000+50_000)
	var id string
	for i := range exchanges {
		turns := exchange(text[i*1000:i*1000+1000], text[i*2000:i*2000+2000])
		var blobs []memory.Blob
		if i < 20 {
			f := blob(text[i*50_000 : (i+1)*50_000])
			blobs = append(blobs, f)
			turns[0].Files = []memory.FileRef{{Path: "/src/file" + string(rune('a'+i)) + ".go", SHA256: f.SHA256, Size: 50_000}}
		}
		if i == 0 {
			th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turns, Blobs: blobs})
			if err != nil {
				b.Fatal(err)
			}
			id = th.ID
			continue
		}
		if _, err := svc.Append(ctx, id, "", memory.Exchange{}, turns, blobs); err != nil {
			b.Fatal(err)
		}
	}
	return id
}

type backend struct {
	name string
	open func(tb testing.TB) memory.Store
}

func backends() []backend {
	return []backend{
		{"sqlite", func(tb testing.TB) memory.Store {
			s, err := sqlitestore.Open(filepath.Join(tb.TempDir(), "memory.db"))
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { s.Close() })
			return s
		}},
		{"redis", func(tb testing.TB) memory.Store {
			s, err := redisstore.Open(redistest.Start(tb).URL(), "", false)
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { s.Close() })
			return s
		}},
	}
}

// BenchmarkSelectHistory selects what gpt-5 (400K context) sees of a
// 50-turn thread with 20 files of 50 KB.
//
//	go test -run '^$' -bench SelectHistory -benchtime 200x ./services/memory/internal/memory
func BenchmarkSelectHistory(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			svc := memory.NewService(be.open(b), time.Hour, 50)
			id := bigThread(b, svc)
			ctx := context.Background()
			latency.Measure(b, 0, func() {
				sel, err := svc.SelectHistory(ctx, id, "", memory.SelectParams{ContextWindow: 400_000, Model: "gpt-5"})
				if err != nil || len(sel.Files) == 0 || len(sel.Turns) == 0 {
					b.Fatalf("selection: %v %d files %d turns", err, len(sel.Files), len(sel.Turns))
				}
			})
		})
	}
}

// BenchmarkAppendExchange appends one exchange (two turns of 1 and 2 KB)
// to threads of 30 to 48 turns holding 15 files, whose expiry each append
// extends.
//
//	go test -run '^$' -bench AppendExchange -benchtime 500x ./services/memory/internal/memory
func BenchmarkAppendExchange(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			svc := memory.NewService(be.open(b), time.Hour, 50)
			const perThread = 10 // 30 turns grow to 50
			var ids []string
			for range (b.N + perThread - 1) / perThread {
				ids = append(ids, thread(b, svc, 15))
			}
			text := sourceText(b, 3000)
			ctx := context.Background()
			i := 0
			latency.Measure(b, 0, func() {
				if _, err := svc.Append(ctx, ids[i/perThread], "", memory.Exchange{}, exchange(text[:1000],
					text[1000:3000]), nil); err != nil {
					b.Fatal(err)
				}
				i++
			})
		})
	}
}

// BenchmarkRedisBytesPerThread reports what the 50-turn, 20-file thread
// costs in Redis (MEMORY USAGE of its keys, its files and the index), with
// and without compression. Each thread gets a key prefix of its own, so no
// file is shared with another thread.
//
//	go test -run '^$' -bench RedisBytesPerThread -benchtime 3x ./services/memory/internal/memory
func BenchmarkRedisBytesPerThread(b *testing.B) {
	srv := redistest.Start(b)
	for _, compress := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "gzip"}[compress]
		b.Run(name, func(b *testing.B) {
			var total int64
			for range b.N {
				prefix := "bench-" + uuid.NewString() + ":"
				store, err := redisstore.Open(srv.URL(), prefix, compress)
				if err != nil {
					b.Fatal(err)
				}
				bigThread(b, memory.NewService(store, time.Hour, 50))
				total += redisBytes(b, srv.URL(), prefix)
				store.Close()
			}
			b.ReportMetric(float64(total)/float64(b.N), "bytes/thread")
		})
	}
}

// BenchmarkStoreAppend is BenchmarkAppendExchange without the service's
// work (validation and token counting): what the store itself costs.
//
//	go test -run '^$' -bench StoreAppend -benchtime 500x ./services/memory/internal/memory
func BenchmarkStoreAppend(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			store := be.open(b)
			svc := memory.NewService(store, time.Hour, 50)
			const perThread = 10
			var ids []string
			for range (b.N + perThread - 1) / perThread {
				ids = append(ids, thread(b, svc, 15))
			}
			text := sourceText(b, 3000)
			turns := exchange(text[:1000], text[1000:3000])
			for i := range turns {
				turns[i].Tokens = map[string]int64{"o200k_base": 300, "estimate": 330}
			}
			ctx := context.Background()
			i := 0
			latency.Measure(b, 0, func() {
				now := time.Now()
				if _, err := store.Append(ctx, ids[i/perThread], "", memory.Exchange{}, turns, 50, now,
					now.Add(time.Hour)); err != nil {
					b.Fatal(err)
				}
				i++
			})
		})
	}
}

// BenchmarkPrepare prepares a call that continues a chat thread of 50
// turns of 1 and 2 KB without files, as the edge asks before every
// continued call, with the thread's turns in the cache.
//
//	go test -run '^$' -bench Prepare -benchmem ./services/memory/internal/memory
func BenchmarkPrepare(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			svc := memory.NewService(be.open(b), time.Hour, 60)
			ctx := context.Background()
			text := sourceText(b, 75_000)
			th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange(text[:1000], text[1000:3000])})
			if err != nil {
				b.Fatal(err)
			}
			for i := 1; i < 25; i++ {
				if _, err := svc.Append(ctx, th.ID, "", memory.Exchange{}, exchange(text[i*3000:i*3000+1000],
					text[i*3000+1000:i*3000+3000]),
					nil); err != nil {
					b.Fatal(err)
				}
			}
			window := &memory.ModelWindow{Model: "gpt-5", ContextWindow: 400_000}
			latency.Measure(b, 0, func() {
				p, err := svc.Prepare(ctx, th.ID, "", "chat", window)
				if err != nil || p.History == nil || len(p.History.Turns) != 50 {
					b.Fatalf("prepare: %v, history %+v", err, p.History)
				}
			})
		})
	}
}
