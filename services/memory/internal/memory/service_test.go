package memory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
	"github.com/zenmcp/zen/services/platform/tokens"
)

func exchange(q, a string) []memory.Turn {
	return []memory.Turn{{Role: memory.RoleUser, Content: q}, {Role: memory.RoleAssistant, Content: a, ModelName: "m"}}
}

func TestSelectHistoryKeepsNewestTurnsInOrder(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange(strings.Repeat("a", 300), "b1")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Append(ctx, th.ID, "", memory.Exchange{}, exchange("q2", "b2"), nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		budget      int64
		wantContent []string
		wantOmitted int
	}{
		{"everything fits", 10_000, []string{strings.Repeat("a", 300), "b1", "q2", "b2"}, 0},
		{"the long first turn does not fit", 100, []string{"b1", "q2", "b2"}, 1},
		{"only the newest", 20, []string{"b2"}, 3},
		{"nothing", 1, nil, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := svc.SelectHistory(ctx, th.ID, "", memory.SelectParams{Budget: tt.budget})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, turn := range sel.Turns {
				got = append(got, turn.Content)
			}
			if strings.Join(got, "|") != strings.Join(tt.wantContent, "|") || sel.Omitted != tt.wantOmitted {
				t.Errorf("got %q omitted %d, want %q omitted %d", got, sel.Omitted, tt.wantContent, tt.wantOmitted)
			}
			if sel.TokensUsed > tt.budget {
				t.Errorf("used %d tokens of a %d budget", sel.TokensUsed, tt.budget)
			}
		})
	}
}

func TestGetHidesThreadsFromOtherClientsAndMalformedIDs(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "alice", Turns: exchange("q", "a")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, client string }{{th.ID, "bob"}, {th.ID, ""}, {"not-a-uuid", "alice"}} {
		if _, err := svc.Get(ctx, tc.id, tc.client); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Get(%q, %q) err = %v, want ErrNotFound", tc.id, tc.client, err)
		}
	}
	if _, err := svc.Get(ctx, th.ID, "alice"); err != nil {
		t.Errorf("owner: %v", err)
	}
}

// Another client's calls find nothing of a thread on the stores that keep
// what they read (SQLite's rows, Redis's metas), even right after the
// owner's append and read left it kept: who a thread belongs to is read
// with it, from the cache as from the store.
func TestAThreadKeptForItsOwnerIsHiddenFromOthers(t *testing.T) {
	t.Parallel()
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc := memory.NewService(be.open(t), time.Hour, 50)
			th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", ClientID: "alice",
				InitialContext: map[string]any{"prompt": "alice's secret"}, Turns: exchange("q1", "a1")})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Append(ctx, th.ID, "alice", memory.Exchange{}, exchange("q2", "a2"), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Prepare(ctx, th.ID, "alice", "chat", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Get(ctx, th.ID, "bob"); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("bob's Get: %v, want ErrNotFound", err)
			}
			if _, err := svc.Prepare(ctx, th.ID, "bob", "chat", nil); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("bob's Prepare: %v, want ErrNotFound", err)
			}
			_, err = svc.Append(ctx, th.ID, "bob", memory.Exchange{}, exchange("q3", "a3"), nil)
			if !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("bob's Append: %v, want ErrNotFound", err)
			}
			got, err := svc.Get(ctx, th.ID, "alice")
			if err != nil || len(got.Turns) != 4 {
				t.Errorf("alice's thread after bob's calls: %v, %v; want its 4 turns", got, err)
			}
		})
	}
}

func TestAppendPastTheLimitStoresNothing(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 4)
	th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange("q1", "a1")})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := svc.Append(ctx, th.ID, "", memory.Exchange{}, exchange("q2", "a2"), nil); err != nil || n != 4 {
		t.Fatalf("second exchange: %d, %v", n, err)
	}
	if _, err := svc.Append(ctx, th.ID, "", memory.Exchange{}, exchange("q3", "a3"), nil); !errors.Is(err,
		memory.ErrTurnLimit) {
		t.Fatalf("third exchange: err = %v, want ErrTurnLimit", err)
	}
	got, _ := svc.Get(ctx, th.ID, "")
	if len(got.Turns) != 4 {
		t.Errorf("have %d turns, want 4", len(got.Turns))
	}
}

func TestCreateRejectsTurnsWithoutRole(t *testing.T) {
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	_, err := svc.Create(context.Background(), memory.CreateParams{ToolName: "chat", Turns: []memory.Turn{{Content: "x"}}})
	if !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
}

// The estimate a selection charges is the formula's, read from the text's
// length: a count stored with a turn (by an older version, or an older
// formula) is never trusted over it, and reading the length costs less
// than finding the stored count.
func TestSelectionEstimatesFromTheText(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	svc := memory.NewService(store, time.Hour, 50)
	used := func(id string, stored map[string]int64) int64 {
		t.Helper()
		now := time.Now().UTC()
		th := &memory.Thread{ID: id, ToolName: "chat", CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour),
			Turns: []memory.Turn{{Role: memory.RoleUser, Content: "hello world", Timestamp: now, Tokens: stored}}}
		if err := store.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		sel, err := svc.SelectHistory(ctx, id, "", memory.SelectParams{Budget: 10_000, Model: "llama3.2"})
		if err != nil || len(sel.Turns) != 1 {
			t.Fatalf("selection: %v, %d turns", err, len(sel.Turns))
		}
		return sel.TokensUsed
	}
	stale := used("00000000-0000-4000-8000-000000000001", map[string]int64{tokens.EstimateEncoding: 999})
	none := used("00000000-0000-4000-8000-000000000002", nil)
	if stale != none {
		t.Errorf("a turn with a stored estimate of 999 cost %d tokens, one without a stored count %d: "+
			"want the same, its estimate (%d) and a header", stale, none, tokens.Estimate("hello world"))
	}
}

// One write (a thread created or imported, an exchange appended) references
// at most MaxFilesPerWrite files: a file's keep-alive reads them all back,
// and a Redis store passes them to one script.
func TestAWriteOfTooManyFilesIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	withFiles := func(n int) []memory.Turn {
		files := make([]memory.FileRef, n)
		for i := range files {
			files[i] = memory.FileRef{Path: fmt.Sprint("/src/f", i), SHA256: fmt.Sprintf("%064x", i)}
		}
		turns := exchange("q", "a")
		turns[0].Files = files
		return turns
	}
	th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: withFiles(memory.MaxFilesPerWrite)})
	if err != nil {
		t.Fatalf("create with %d files: %v", memory.MaxFilesPerWrite, err)
	}
	over := withFiles(memory.MaxFilesPerWrite + 1)
	_, createErr := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: over})
	_, appendErr := svc.Append(ctx, th.ID, "", memory.Exchange{}, over, nil)
	_, importErr := svc.Import(ctx, "", []*memory.Thread{{ID: uuid.NewString(), ToolName: "chat", Turns: over}}, false)
	for what, err := range map[string]error{"create": createErr, "append": appendErr, "import": importErr} {
		if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "files") {
			t.Errorf("%s with %d files: err = %v, want ErrInvalid naming the files", what, memory.MaxFilesPerWrite+1, err)
		}
	}
	if got, _ := svc.Get(ctx, th.ID, ""); len(got.Turns) != 2 {
		t.Errorf("the thread holds %d turns after the refused append, want 2", len(got.Turns))
	}
}

// Values nested past memory.MaxNesting, holding more than
// memory.MaxValues values, or model metadata past a turn's size, are
// refused on every write: SQLite reads no JSON nested a
// thousand deep, so an import of one stored a thread no read could ever
// answer ("try again shortly", for good), and turns nested that deep took
// readers gigabytes to render.
func TestDeepOrLargeValuesAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	var deep any = "bottom"
	for range memory.MaxNesting + 1 {
		deep = []any{deep}
	}
	// Three bytes a value as JSON, a Go map and more each as memory, the
	// edge and the gateway decode it: 44 MB of turns took a read 10 GB.
	wide := make([]any, memory.MaxValues)
	for i := range wide {
		wide[i] = map[string]any{}
	}
	th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange("q", "a")})
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*memory.Turn, *map[string]any){
		"deep model metadata": func(turn *memory.Turn, _ *map[string]any) {
			turn.ModelMetadata = map[string]any{"usage": deep}
		},
		"large model metadata": func(turn *memory.Turn, _ *map[string]any) {
			turn.ModelMetadata = map[string]any{"usage": strings.Repeat("m", memory.MaxTurnBytes+1)}
		},
		"deep workflow state": func(turn *memory.Turn, _ *map[string]any) {
			turn.WorkflowState = map[string]any{"steps": deep}
		},
		"deep initial context": func(_ *memory.Turn, initial *map[string]any) {
			*initial = map[string]any{"prompt": deep}
		},
		"wide model metadata": func(turn *memory.Turn, _ *map[string]any) {
			turn.ModelMetadata = map[string]any{"a": wide}
		},
		"wide workflow state": func(turn *memory.Turn, _ *map[string]any) {
			turn.WorkflowState = map[string]any{"a": wide}
		},
		"wide initial context": func(_ *memory.Turn, initial *map[string]any) {
			*initial = map[string]any{"a": wide}
		},
	} {
		t.Run(name, func(t *testing.T) {
			turns := exchange("q", "a")
			var initial map[string]any
			change(&turns[1], &initial)
			_, createErr := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turns,
				InitialContext: initial})
			_, importErr := svc.Import(ctx, "", []*memory.Thread{{ID: uuid.NewString(), ToolName: "chat",
				Turns: turns, InitialContext: initial}}, false)
			errs := map[string]error{"create": createErr, "import": importErr}
			if initial == nil {
				_, errs["append"] = svc.Append(ctx, th.ID, "", memory.Exchange{}, turns, nil)
			}
			for what, err := range errs {
				if !errors.Is(err, memory.ErrInvalid) {
					t.Errorf("%s: err = %v, want ErrInvalid", what, err)
				}
			}
		})
	}
}

// Names a turn or a thread carries are bounded: an import could put
// megabytes in a tool's name, which every listing and read then carried.
func TestLongNamesAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	long := strings.Repeat("n", memory.MaxNameBytes+1)
	existing, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange("q", "a")})
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*memory.Thread){
		"thread's tool":   func(th *memory.Thread) { th.ToolName = long },
		"turn's tool":     func(th *memory.Thread) { th.Turns[1].ToolName = long },
		"turn's model":    func(th *memory.Thread) { th.Turns[1].ModelName = long },
		"turn's provider": func(th *memory.Thread) { th.Turns[1].ModelProvider = long },
	} {
		t.Run(name, func(t *testing.T) {
			th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", Turns: exchange("q", "a")}
			change(th)
			_, importErr := svc.Import(ctx, "", []*memory.Thread{th}, false)
			_, createErr := svc.Create(ctx, memory.CreateParams{ToolName: th.ToolName, Turns: th.Turns})
			errs := map[string]error{"import": importErr, "create": createErr}
			if th.ToolName == "chat" {
				_, errs["append"] = svc.Append(ctx, existing.ID, "", memory.Exchange{}, th.Turns, nil)
			}
			for what, err := range errs {
				if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "bytes") {
					t.Errorf("%s: err = %v, want ErrInvalid naming the size", what, err)
				}
			}
		})
	}
}
