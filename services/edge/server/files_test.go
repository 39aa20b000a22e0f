package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFileRootsAreCheckedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	tests := []struct {
		name, value string
		want        []string
		err         string
	}{
		{"unset", "", nil, ""},
		{"one", dir, []string{dir}, ""},
		{"a comma list, spaces trimmed", dir + ", " + other + ",", []string{dir, other}, ""},
		{"relative", "src", nil, `ZEN_FILE_ROOTS: "src" is not an absolute path`},
		{"missing", filepath.Join(dir, "nope"), nil, "ZEN_FILE_ROOTS: " + `"` + filepath.Join(dir, "nope") + `": stat`},
		{"a file", file, nil, "ZEN_FILE_ROOTS: " + `"` + file + `" is not a directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := loadFileRoots(func(k string) string {
				if k == "ZEN_FILE_ROOTS" {
					return tt.value
				}
				return ""
			})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("roots (-want +got):\n%s", diff)
			}
		})
	}
}
