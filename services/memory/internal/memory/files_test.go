package memory_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
	"github.com/zenmcp/zen/services/platform/tokens"
)

func blob(content string) memory.Blob {
	sum := sha256.Sum256([]byte(content))
	return memory.Blob{SHA256: hex.EncodeToString(sum[:]), Content: content}
}

func turnWith(path string, b memory.Blob) []memory.Turn {
	return []memory.Turn{
		{Role: memory.RoleUser, Content: "look at " + path, Files: []memory.FileRef{{Path: path, SHA256: b.SHA256, Size: int64(len(b.Content))}}},
		{Role: memory.RoleAssistant, Content: "looked", ModelName: "gpt-5"},
	}
}

func TestSelectionEmbedsEachFileOnceAtItsNewestVersion(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	v1, v2, other := blob("version one\n"), blob("version two\n"), blob("another file\n")
	th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turnWith("/src/a.go", v1), Blobs: []memory.Blob{v1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Append(ctx, th.ID, "", memory.Exchange{}, turnWith("/src/b.go", other),
		[]memory.Blob{other}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Append(ctx, th.ID, "", memory.Exchange{}, turnWith("/src/a.go", v2),
		[]memory.Blob{v2}); err != nil {
		t.Fatal(err)
	}
	sel, err := svc.SelectHistory(ctx, th.ID, "", memory.SelectParams{
		ContextWindow: 128_000, Model: "gpt-5",
		NewFiles: []memory.FileRef{{Path: "/src/a.go", SHA256: v2.SHA256}, {Path: "/src/b.go", SHA256: blob("b changed\n").SHA256}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Files) != 2 || sel.Files[0].Path != "/src/b.go" || sel.Files[1].Path != "/src/a.go" || sel.Files[1].Content != "version two\n" {
		t.Fatalf("files = %+v; want b.go then a.go at version two, oldest reference first", sel.Files)
	}
	if strings.Join(sel.Known, ",") != "/src/a.go" {
		t.Errorf("known = %v; want only a.go (b.go changed, so it is new)", sel.Known)
	}
	if sel.Encoding != tokens.O200k || sel.FileTokens != tokens.Count(tokens.O200k, "another file\n")+tokens.Count(tokens.O200k, "version two\n") {
		t.Errorf("encoding %s, file tokens %d", sel.Encoding, sel.FileTokens)
	}
	if sel.HistoryBudget != 38_400 || sel.FileBudget != 23_040 {
		t.Errorf("budgets %d/%d, want the reference's 38400/23040 for 128K", sel.HistoryBudget, sel.FileBudget)
	}
}

func TestFilesOverTheBudgetAreLeftOutNewestFirst(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	// A 10K context gives a file budget of 1,800 tokens: room for one of
	// these two files.
	old, recent := blob(strings.Repeat("old line\n", 400)), blob(strings.Repeat("new line\n", 400))
	th, _ := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: turnWith("/old.txt", old), Blobs: []memory.Blob{old}})
	if _, err := svc.Append(ctx, th.ID, "", memory.Exchange{}, turnWith("/new.txt", recent),
		[]memory.Blob{recent}); err != nil {
		t.Fatal(err)
	}
	sel, err := svc.SelectHistory(ctx, th.ID, "", memory.SelectParams{ContextWindow: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Files) != 1 || sel.Files[0].Path != "/new.txt" || sel.OmittedFiles != 1 {
		t.Errorf("files %v, omitted %d; want the newest file and one left out", sel.Files, sel.OmittedFiles)
	}
	if sel.FileTokens > sel.FileBudget || sel.TokensUsed > sel.HistoryBudget || len(sel.Turns) != 4 {
		t.Errorf("files %d of %d, turns %d of %d (%d turns); each must keep to its own budget", sel.FileTokens, sel.FileBudget,
			sel.TokensUsed, sel.HistoryBudget, len(sel.Turns))
	}
}

func TestWritesRejectBadFilesAndOversizeTurns(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	good := blob("x")
	tests := map[string]memory.CreateParams{
		"hash mismatch": {ToolName: "chat", Turns: turnWith("/a", good), Blobs: []memory.Blob{{SHA256: good.SHA256, Content: "y"}}},
		"oversize turn": {ToolName: "chat", Turns: []memory.Turn{{Role: memory.RoleUser, Content: strings.Repeat("x", memory.MaxTurnBytes+1)}}},
		"oversize file": {ToolName: "chat", Blobs: []memory.Blob{blob(strings.Repeat("x", memory.MaxBlobBytes+1))}},
		// A workflow's state carries every step's findings: unbounded, a
		// thread's steps grew with the square of their number.
		"oversize workflow state": {ToolName: "debug", Turns: []memory.Turn{{Role: memory.RoleAssistant,
			Content: "step 3", WorkflowState: map[string]any{"work_history": []any{
				strings.Repeat("f", memory.MaxWorkflowStateBytes)}}}}},
		// Copied into every branch: a 100-byte request stored 30 MB.
		"oversize initial context": {ToolName: "chat", InitialContext: map[string]any{
			"prompt": strings.Repeat("x", memory.MaxTurnBytes)}},
	}
	for name, p := range tests {
		if _, err := svc.Create(ctx, p); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	big := &memory.Thread{ID: "5b7a9c1e-2f3d-4e5a-8b6c-7d8e9f0a1b2c", ToolName: "chat",
		InitialContext: tests["oversize initial context"].InitialContext}
	if _, err := svc.Import(ctx, "me", []*memory.Thread{big}, false); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("an import of an oversize initial context: err = %v, want ErrInvalid", err)
	}
}

func TestTurnsCarryTheirTokenCounts(t *testing.T) {
	ctx := context.Background()
	svc := memory.NewService(memstore.New(), time.Hour, 50)
	th, err := svc.Create(ctx, memory.CreateParams{ToolName: "chat", Turns: exchange("hello world", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	// The estimate is not stored: a selection reads it from the length.
	if diff := cmp.Diff(map[string]int64{tokens.O200k: 2}, th.Turns[0].Tokens); diff != "" {
		t.Errorf("the turn's stored counts (-want +got):\n%s", diff)
	}
}
