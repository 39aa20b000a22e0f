package memory_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/latency"
)

// storeFixture writes threads straight into a store, with the token counts
// made beforehand, so that setting up hundreds of threads costs no
// tokenizing and the benchmarks measure the store alone.
type storeFixture struct {
	store memory.Store
	turns []memory.Turn // 50: user turns of 1 KB, the first 20 each with a 50 KB file; answers of 2 KB
	reply []memory.Turn // the exchange an append adds: 1 KB and 2 KB, no file
}

func newStoreFixture(b *testing.B, store memory.Store) *storeFixture {
	b.Helper()
	text := sourceText(b, 20*50_000+50_000)
	f := &storeFixture{store: store}
	var blobs []memory.Blob
	for i := range 25 {
		ex := exchange(text[i*1000:i*1000+1000], text[i*2000:i*2000+2000])
		if i < 20 {
			bl := blob(text[i*50_000 : (i+1)*50_000])
			bl.Tokens = map[string]int64{"o200k_base": 12_500, "estimate": 14_000}
			blobs = append(blobs, bl)
			ex[0].Files = []memory.FileRef{{Path: "/src/file" + string(rune('a'+i)) + ".go", SHA256: bl.SHA256, Size: 50_000}}
		}
		f.turns = append(f.turns, ex...)
	}
	f.reply = exchange(text[:1000], text[1000:3000])
	for _, ts := range [][]memory.Turn{f.turns, f.reply} {
		for i := range ts {
			ts[i].Timestamp = time.Now().UTC()
			n := int64(len(ts[i].Content))
			ts[i].Tokens = map[string]int64{"o200k_base": n / 4, "estimate": n / 3}
		}
	}
	now := time.Now()
	if err := store.SaveBlobs(context.Background(), blobs, now, now.Add(time.Hour)); err != nil {
		b.Fatal(err)
	}
	return f
}

// threads creates n threads of the fixture's first turns turns, each
// with a small initial context.
func (f *storeFixture) threads(b *testing.B, n, turns int) []string {
	b.Helper()
	return f.threadsWith(b, n, turns, map[string]any{"prompt": "review"})
}

// threadsWith is threads with the initial context initial.
func (f *storeFixture) threadsWith(b *testing.B, n, turns int, initial map[string]any) []string {
	b.Helper()
	ids := make([]string, n)
	for i := range ids {
		now := time.Now().UTC()
		th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(time.Hour), Turns: f.turns[:turns], InitialContext: initial}
		if err := f.store.Create(context.Background(), th); err != nil {
			b.Fatal(err)
		}
		ids[i] = th.ID
	}
	return ids
}

func (f *storeFixture) append(b *testing.B, id string) {
	now := time.Now()
	if _, err := f.store.Append(context.Background(), id, "", memory.Exchange{}, f.reply, 1000, now,
		now.Add(time.Hour)); err != nil {
		b.Error(err)
	}
}

// BenchmarkStoreGet reads a 50-turn thread (20 files referenced, not read).
//
//	go test -run '^$' -bench StoreGet -benchtime 1000x ./services/memory/internal/memory
func BenchmarkStoreGet(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			f := newStoreFixture(b, be.open(b))
			id := f.threads(b, 1, 50)[0]
			latency.Measure(b, 10, func() {
				th, err := f.store.Get(context.Background(), id, time.Now())
				if err != nil || len(th.Turns) != 50 {
					b.Fatalf("get: %v", err)
				}
			})
		})
	}
}

// BenchmarkStoreReadAfterAppend is a continued call's read: the thread
// read right after the previous call's append, within 1 MiB as a prepare
// reads it first, its first prompt, kept in the thread's initial context,
// of 100 bytes, 20 KB or 400 KB. Each thread starts with 50 turns and
// takes 100 calls (to 250 turns: an append's limit here is 1,000). Only
// the reads are timed.
//
//	go test -run '^$' -bench StoreReadAfterAppend -benchtime 2000x ./services/memory/internal/memory
func BenchmarkStoreReadAfterAppend(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			f := newStoreFixture(b, be.open(b))
			for _, prompt := range []int{100, 20_000, 400_000} {
				b.Run("prompt="+strconv.Itoa(prompt), func(b *testing.B) {
					initial := map[string]any{"prompt": sourceText(b, prompt)[:prompt]}
					var id string
					lat := make([]time.Duration, 0, b.N)
					for i := range b.N {
						if i%100 == 0 {
							now := time.Now().UTC()
							id = uuid.NewString()
							th := &memory.Thread{
								ID:             id,
								ToolName:       "chat",
								CreatedAt:      now,
								UpdatedAt:      now,
								ExpiresAt:      now.Add(time.Hour),
								Turns:          f.turns,
								InitialContext: initial,
							}
							if err := f.store.Create(context.Background(), th); err != nil {
								b.Fatal(err)
							}
						}
						f.append(b, id)
						t0 := time.Now()
						if _, heavier, err := f.store.GetWithin(context.Background(), id, time.Now(), 1<<20); err != nil ||
							heavier {
							b.Fatalf("the read within 1 MiB: %v (heavier: %v)", err, heavier)
						}
						lat = append(lat, time.Since(t0))
					}
					latency.Report(b, lat)
				})
			}
		})
	}
}

// BenchmarkStoreAppendAt appends one exchange (1 and 2 KB, no new file) to
// threads that hold 2 or 50 turns, or 2 turns and an initial context of
// 512 KiB (a first call's long arguments): an append should cost what it
// appends, whatever the thread holds. Each thread takes five appends.
//
//	go test -run '^$' -bench StoreAppendAt -benchtime 500x ./services/memory/internal/memory
func BenchmarkStoreAppendAt(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			f := newStoreFixture(b, be.open(b))
			for _, turns := range []int{2, 50} {
				b.Run("turns="+strconv.Itoa(turns), func(b *testing.B) {
					const perThread = 5
					ids := f.threads(b, (b.N+perThread-1)/perThread, turns)
					i := 0
					latency.Measure(b, 0, func() {
						f.append(b, ids[i/perThread])
						i++
					})
				})
			}
			b.Run("turns=2/context=512KiB", func(b *testing.B) {
				const perThread = 5
				ids := f.threadsWith(b, (b.N+perThread-1)/perThread, 2,
					map[string]any{"prompt": strings.Repeat("x", 512<<10)})
				i := 0
				latency.Measure(b, 0, func() {
					f.append(b, ids[i/perThread])
					i++
				})
			})
		})
	}
}

// BenchmarkStoreCalls is the store's share of continued calls from 16
// callers at once: each call reads its thread (40 to 48 turns) whole and
// appends one exchange to it, as memory does for a chat call.
//
//	go test -run '^$' -bench StoreCalls -benchtime 2000x ./services/memory/internal/memory
func BenchmarkStoreCalls(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			f := newStoreFixture(b, be.open(b))
			const perThread = 5
			ids := f.threads(b, (b.N+perThread-1)/perThread, 40)
			var next atomic.Int64
			b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0))) // 16 callers on the 2-core machine
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := ids[(next.Add(1)-1)/perThread]
					if _, err := f.store.Get(context.Background(), id, time.Now()); err != nil {
						b.Error(err)
					}
					f.append(b, id)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}
