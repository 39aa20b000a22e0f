package memory_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
	"github.com/zenmcp/zen/services/memory/internal/memory/redisstore"
	"github.com/zenmcp/zen/services/platform/redistest"
	"github.com/zenmcp/zen/services/platform/tokens"
)

// TestASelectionReadsOnlyTheFilesItKeeps: a thread's files are weighed by
// their size and stored counts before any is read, so that a selection
// reads the content of the files it keeps and no other. Reading every
// candidate first, a thread of 32 files of 256 KiB, none of which fits a
// 128K model's file budget, cost each continued call 8 MiB of reads; a
// thread of a few hundred such files, hundreds of MB. Not parallel: it
// counts what the whole process allocates.
func TestASelectionReadsOnlyTheFilesItKeeps(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			svc := memory.NewService(be.open(t), time.Hour, 50)
			const files = 32
			var blobs []memory.Blob
			var refs []memory.FileRef
			for i := range files {
				// About 52K tokens each: over the 23,040 a 128K model has for files.
				b := blob(fmt.Sprintf("file %d\n", i) + strings.Repeat("word ", 256<<10/5))
				blobs = append(blobs, b)
				refs = append(refs, memory.FileRef{Path: fmt.Sprintf("/big/%d.txt", i), SHA256: b.SHA256})
			}
			turns := exchange("look at these", "looked")
			turns[0].Files = refs
			small := blob("the one file that fits\n")
			blobs = append(blobs, small)
			turns = append(turns, turnWith("/small.txt", small)...)
			th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turns, Blobs: blobs})
			if err != nil {
				t.Fatal(err)
			}
			p := memory.SelectParams{ContextWindow: 128_000, Model: "gpt-5"}
			if _, err := svc.SelectHistory(ctx, th.ID, "", p); err != nil { // warm: statements, caches
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			sel, err := svc.SelectHistory(ctx, th.ID, "", p)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if len(sel.Files) != 1 || sel.Files[0].Path != "/small.txt" || sel.Files[0].Content != small.Content ||
				sel.OmittedFiles != files {
				t.Fatalf("kept %d files, left out %d; want /small.txt alone, and the %d large ones left out",
					len(sel.Files), sel.OmittedFiles, files)
			}
			// The large files' content is 8 MiB; the thread's turns and the
			// selection's own work come to far less than 2.
			if read := after.TotalAlloc - before.TotalAlloc; read > 2<<20 {
				t.Errorf("the selection allocated %d KiB: it read files it left out", read>>10)
			}
		})
	}
}

// TestFilesWithoutAStoredCountAreCountedAsTheyWere: for a model whose
// encoding no count was stored for (cl100k), a file's cost comes from its
// content, read before it is weighed; past what a selection may count, a
// token a byte.
func TestFilesWithoutAStoredCountAreCountedAsTheyWere(t *testing.T) {
	for _, be := range append(backends(), backend{"memstore", func(testing.TB) memory.Store { return memstore.New() }}) {
		t.Run(be.name, func(t *testing.T) {
			ctx := context.Background()
			svc := memory.NewService(be.open(t), time.Hour, 50)
			counted := blob(strings.Repeat("counted text, ", 2000))   // 28 KB: counted
			past := blob(strings.Repeat("past the allowance ", 3000)) // 57 KB: past the 64 KiB counted in all
			turns := append(turnWith("/past.txt", past), turnWith("/counted.txt", counted)...)
			th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turns,
				Blobs: []memory.Blob{counted, past}})
			if err != nil {
				t.Fatal(err)
			}
			sel, err := svc.SelectHistory(ctx, th.ID, "", memory.SelectParams{ContextWindow: 1_000_000, Model: "gpt-4"})
			if err != nil {
				t.Fatal(err)
			}
			type file struct {
				Path    string
				Tokens  int64
				Content string
			}
			var got []file
			for _, f := range sel.Files {
				got = append(got, file{f.Path, f.Tokens, f.Content})
			}
			want := []file{
				{"/past.txt", int64(len(past.Content)), past.Content},
				{"/counted.txt", tokens.Count(tokens.Cl100k, counted.Content), counted.Content},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the files selected (-want +got):\n%s", diff)
			}
			if sel.FileTokens != want[0].Tokens+want[1].Tokens || sel.OmittedFiles != 0 {
				t.Errorf("file tokens %d, %d left out; want %d, none", sel.FileTokens, sel.OmittedFiles,
					want[0].Tokens+want[1].Tokens)
			}
		})
	}
}

// TestABlobStoredBeforeItsLengthIsReadToWeighIt: Redis kept no length
// with the blobs of older versions; a selection reads such a blob's
// content to weigh it, and storing the blob again records its length.
func TestABlobStoredBeforeItsLengthIsReadToWeighIt(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	store, err := redisstore.Open(srv.URL(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rdb.Close() })
	svc := memory.NewService(store, time.Hour, 50)
	old := blob("stored by an older version\n")
	th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turnWith("/old.txt", old),
		Blobs: []memory.Blob{old}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, "zen:blob:"+old.SHA256, "bytes", "not a length").Err(); err != nil {
		t.Fatal(err)
	}
	heads, err := store.BlobHeads(ctx, []string{old.SHA256}, time.Now())
	if err != nil || heads[old.SHA256].Bytes != -1 {
		t.Fatalf("the head of a blob whose length is not one: %+v, %v; want its length unknown (-1)", heads, err)
	}
	if err := rdb.HDel(ctx, "zen:blob:"+old.SHA256, "bytes").Err(); err != nil {
		t.Fatal(err)
	}
	heads, err = store.BlobHeads(ctx, []string{old.SHA256}, time.Now())
	if err != nil || heads[old.SHA256].Bytes != -1 {
		t.Fatalf("the head of a blob without its length: %+v, %v; want its length unknown (-1)", heads, err)
	}
	// A model zen estimates for: its cost is the length's.
	sel, err := svc.SelectHistory(ctx, th.ID, "", memory.SelectParams{ContextWindow: 128_000, Model: "gemini-2.5-pro"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Files) != 1 || sel.Files[0].Content != old.Content || sel.Files[0].Tokens != tokens.Estimate(old.Content) {
		t.Errorf("selected %+v; want the old file, whole, at its estimate, %d", sel.Files, tokens.Estimate(old.Content))
	}
	if _, err := svc.Append(ctx, th.ID, "", memory.Exchange{}, turnWith("/old.txt", old),
		[]memory.Blob{old}); err != nil {
		t.Fatal(err)
	}
	heads, err = store.BlobHeads(ctx, []string{old.SHA256}, time.Now())
	if err != nil || heads[old.SHA256].Bytes != int64(len(old.Content)) {
		t.Errorf("the head of the blob stored again: %+v, %v; want its length, %d", heads, err, len(old.Content))
	}
}

// expiringBlobs is a store whose blob named gone expires between a
// selection's read of the heads and its read of the contents.
type expiringBlobs struct {
	memory.Store
	gone string
}

func (e *expiringBlobs) GetBlobs(ctx context.Context, shas []string, now time.Time) (map[string]memory.Blob, error) {
	blobs, err := e.Store.GetBlobs(ctx, shas, now)
	delete(blobs, e.gone)
	return blobs, err
}

// A file that expires after its head was read is left out, and its tokens
// are not charged: whether it was to be kept or counted.
func TestAFileThatExpiresDuringASelectionIsLeftOut(t *testing.T) {
	t.Parallel()
	for _, model := range []string{"gpt-5", "gpt-4"} { // a stored count; a count made on reading
		t.Run(model, func(t *testing.T) {
			ctx := context.Background()
			store := &expiringBlobs{Store: memstore.New()}
			svc := memory.NewService(store, time.Hour, 50)
			kept, gone := blob("package kept\n"), blob("package gone\n")
			th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat",
				Turns: append(turnWith("/kept.go", kept), turnWith("/gone.go", gone)...),
				Blobs: []memory.Blob{kept, gone}})
			if err != nil {
				t.Fatal(err)
			}
			store.gone = gone.SHA256
			sel, err := svc.SelectHistory(ctx, th.ID, "", memory.SelectParams{ContextWindow: 128_000, Model: model})
			if err != nil {
				t.Fatal(err)
			}
			type got struct {
				Paths   []string
				Tokens  int64
				Omitted int
			}
			var paths []string
			for _, f := range sel.Files {
				paths = append(paths, f.Path)
			}
			want := got{[]string{"/kept.go"}, tokens.Count(tokens.EncodingFor(model), kept.Content), 1}
			if diff := cmp.Diff(want, got{paths, sel.FileTokens, sel.OmittedFiles}); diff != "" {
				t.Errorf("the selection (-want +got):\n%s", diff)
			}
		})
	}
}

// askedBlobs is a store that records the blobs each GetBlobs asks for.
type askedBlobs struct {
	memory.Store
	asked [][]string
}

func (a *askedBlobs) GetBlobs(ctx context.Context, shas []string, now time.Time) (map[string]memory.Blob, error) {
	a.asked = append(a.asked, shas)
	return a.Store.GetBlobs(ctx, shas, now)
}

// A file a thread names under several paths is read once: Redis read it
// once for each (43 MB for 7 paths to one file of 2 MiB).
func TestAFileUnderSeveralPathsIsReadOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &askedBlobs{Store: memstore.New()}
	svc := memory.NewService(store, time.Hour, 50)
	f := blob("package shared\n")
	turns := exchange("look at these", "looked")
	for _, p := range []string{"/a.go", "/b.go", "/c.go"} {
		turns[0].Files = append(turns[0].Files, memory.FileRef{Path: p, SHA256: f.SHA256})
	}
	th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turns, Blobs: []memory.Blob{f}})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := svc.SelectHistory(ctx, th.ID, "", memory.SelectParams{ContextWindow: 128_000, Model: "gpt-5"})
	if err != nil || len(sel.Files) != 3 {
		t.Fatalf("%d files, %v; want the three paths", len(sel.Files), err)
	}
	if diff := cmp.Diff([][]string{{f.SHA256}}, store.asked); diff != "" {
		t.Errorf("the blobs read (-want +got):\n%s", diff)
	}
}
