package tools

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"google.golang.org/protobuf/testing/protocmp"
)

// TestChatTellsTheModelWhichFilesWereLeftOut: a file the edge went without
// is one line among the context files, even when no file was read.
func TestChatTellsTheModelWhichFilesWereLeftOut(t *testing.T) {
	f := &fakeRouter{reply: "ok"}
	_, err := runChat(context.Background(), newEnv(t, f), &Call{
		Args: map[string]any{"prompt": "why?"}, Model: &routerv1.Model{Name: "llama3.2"},
		Skipped: []*executorv1.SkippedFile{{Path: "/p/gone.go", Reason: "not found"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	user := f.got[0].GetMessages()[0].GetContent()
	if want := "=== CONTEXT FILES ===\n--- FILE SKIPPED: /p/gone.go (not found) ---\n"; !strings.Contains(user, want) {
		t.Errorf("user message lacks %q:\n%s", want, user)
	}
}

// TestFilesOnceLeavesOutWhatTheStepSkipped: the expert reads each path once,
// the step's version first; a path the step named but went without is not
// taken from the thread either, where it may be out of date.
func TestFilesOnceLeavesOutWhatTheStepSkipped(t *testing.T) {
	a := &executorv1.FileContent{Path: "/p/a.go", Sha256: "new"}
	c := &executorv1.FileContent{Path: "/p/c.go", Sha256: "c"}
	got := filesOnce(&Call{
		Files:   []*executorv1.FileContent{a},
		Skipped: []*executorv1.SkippedFile{{Path: "/p/b.go", Reason: "not found"}},
		Conversation: &executorv1.Conversation{Files: []*executorv1.FileContent{
			{Path: "/p/a.go", Sha256: "old"}, {Path: "/p/b.go", Sha256: "b"}, c,
		}},
	})
	if diff := cmp.Diff([]*executorv1.FileContent{a, c}, got, protocmp.Transform()); diff != "" {
		t.Errorf("filesOnce (-want +got):\n%s", diff)
	}
}
