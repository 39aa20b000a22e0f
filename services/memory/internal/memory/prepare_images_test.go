package memory

import (
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
