package memory

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSessionImagesAreTheWorkflowSessionsOwn: a final step's expert sees
// the images its session's steps named: newest first, each once, its own
// tool's, back to the session's step 1, never a data URL (as large as its
// image, and in the turns already).
func TestSessionImagesAreTheWorkflowSessionsOwn(t *testing.T) {
	t.Parallel()
	step := func(n int) map[string]any { return map[string]any{"step": map[string]any{"step_number": float64(n)}} }
	turns := []Turn{
		{ToolName: "debug", Images: []string{"/old/session.png"}, ModelMetadata: step(1)},
		{ToolName: "debug", Images: []string{"/old/second.png"}, ModelMetadata: step(2)},
		{ToolName: "debug", Images: []string{"/now/first.png", "data:image/png;base64,AAAA"}, ModelMetadata: step(1)},
		{ToolName: "chat", Images: []string{"/chat/picture.png"}},
		{ToolName: "debug", Images: []string{"/now/second.png", "/now/first.png"}, ModelMetadata: step(2)},
		{ToolName: "debug", Role: RoleAssistant},
	}
	want := []string{"/now/second.png", "/now/first.png"}
	if diff := cmp.Diff(want, SessionImages(turns, "debug")); diff != "" {
		t.Errorf("SessionImages (-want +got):\n%s", diff)
	}
}

// TestSessionImagesAreFew: a thread may hold hundreds of thousands of
// image paths (an import's turns, within the thread's weight), and a final
// step took 30 s gathering them, each of which the edge then tried to read.
// It gets the newest MaxSessionImages, at once.
func TestSessionImagesAreFew(t *testing.T) {
	t.Parallel()
	var turns []Turn
	for i := range 200 {
		images := make([]string, 1000)
		for j := range images {
			images[j] = fmt.Sprintf("/shots/%d-%d.png", i, j)
		}
		turns = append(turns, Turn{ToolName: "debug", Images: images})
	}
	got := SessionImages(turns, "debug")
	want := []string{"/shots/199-0.png", "/shots/199-1.png", "/shots/199-2.png", "/shots/199-3.png", "/shots/199-4.png"}
	if diff := cmp.Diff(want[:MaxSessionImages], got); diff != "" {
		t.Errorf("SessionImages (-want +got):\n%s", diff)
	}
}

// TestSessionFilesAreTheWorkflowSessionsOwn: a final step's expert reads
// the files its session's steps named relevant: newest step first, each
// once, its own tool's, back to the session's step 1, and at most
// MaxSessionFiles of a thread that names more (an import's).
func TestSessionFilesAreTheWorkflowSessionsOwn(t *testing.T) {
	t.Parallel()
	step := func(n int, files ...any) map[string]any {
		return map[string]any{"step": map[string]any{"step_number": float64(n), "relevant_files": files}}
	}
	turns := []Turn{
		{ToolName: "analyze", ModelMetadata: step(1, "/old/session.py")},
		{ToolName: "analyze", ModelMetadata: step(1, "/now/a.py", 7, "")}, // what an import may write
		{ToolName: "chat", ModelMetadata: step(2, "/chat/c.py")},
		{ToolName: "analyze", ModelMetadata: step(2, "/now/b.py", "/now/a.py")},
		{ToolName: "analyze", Role: RoleAssistant},
	}
	want := []string{"/now/b.py", "/now/a.py"}
	if diff := cmp.Diff(want, SessionFiles(turns, "analyze")); diff != "" {
		t.Errorf("SessionFiles (-want +got):\n%s", diff)
	}
	many := make([]any, 3*MaxSessionFiles)
	for i := range many {
		many[i] = fmt.Sprintf("/src/%d.py", i)
	}
	got := SessionFiles([]Turn{{ToolName: "analyze", ModelMetadata: step(2, many...)}}, "analyze")
	if len(got) != MaxSessionFiles || got[0] != "/src/0.py" {
		t.Errorf("SessionFiles of a step naming %d files: %d, from %v; want the first %d", len(many), len(got),
			got[:min(1, len(got))], MaxSessionFiles)
	}
}
