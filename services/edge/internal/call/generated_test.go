package call

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"github.com/zenmcp/zen/services/platform/reply"
)

func TestSaveGeneratedCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		shared string
		// plant prepares the working directory; victim is a file outside
		// the roots that must keep its content.
		plant func(t *testing.T, wd, victim string)
		want  []string // in the content
		file  bool     // whether zen_generated.code holds the code
	}{
		{name: "written beside the project", plant: func(*testing.T, string, string) {},
			want: []string{"GENERATED CODE: the model wrote code for this task to"}, file: true},
		{name: "a planted link is refused and the code kept", plant: func(t *testing.T, wd, victim string) {
			if err := os.Symlink(victim, filepath.Join(wd, GeneratedCodeFile)); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"zen could not save the generated code", "is a symbolic link", "the code"}},
		{name: "a shared server writes nothing", shared: "ZEN_AUTH_TOKENS_FILE names its clients",
			plant: func(*testing.T, string, string) {},
			want:  []string{"this zen is a shared server (ZEN_AUTH_TOKENS_FILE names its clients)", "the code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			home, outside := t.TempDir(), t.TempDir()
			wd := filepath.Join(home, "proj")
			victim := filepath.Join(outside, "victim")
			if err := os.Mkdir(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(victim, []byte("original"), 0o644); err != nil {
				t.Fatal(err)
			}
			tt.plant(t, wd, victim)
			r := NewRunner(Backends{}, nil, files.NewPolicy(files.Config{Home: home, Roots: []string{home}, Shared: tt.shared}),
				DefaultOutputTokens, nil)
			payload := &reply.Reply{Content: "answer"}
			r.saveGeneratedCode(payload, map[string]any{"working_directory_absolute_path": wd}, "the code")
			content := payload.Content
			for _, want := range tt.want {
				if !strings.Contains(content, want) {
					t.Errorf("content lacks %q:\n%s", want, content)
				}
			}
			saved, err := os.ReadFile(filepath.Join(wd, GeneratedCodeFile))
			if tt.file && (err != nil || string(saved) != "the code\n") {
				t.Errorf("%s = %q, %v; want the code", GeneratedCodeFile, saved, err)
			}
			if !tt.file && tt.shared != "" && err == nil {
				t.Errorf("a shared server wrote %s", GeneratedCodeFile)
			}
			raw, _ := os.ReadFile(victim)
			if diff := cmp.Diff("original", string(raw)); diff != "" {
				t.Errorf("the victim changed (-want +got):\n%s", diff)
			}
		})
	}
}
