package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPathSecurity(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	write(t, filepath.Join(proj, "main.go"), "package main")
	write(t, filepath.Join(proj, "données", "café.go"), "package café")
	write(t, filepath.Join(proj, ".env"), "SECRET=1")
	must(t, os.Symlink("/etc/passwd", filepath.Join(proj, "passwd-link")))
	must(t, os.Symlink("/etc", filepath.Join(proj, "etc-link")))
	must(t, os.Symlink(filepath.Join(proj, "main.go"), filepath.Join(proj, "main-link.go")))
	must(t, os.Symlink(home, filepath.Join(proj, "home-link")))
	t.Setenv("HOME", home)
	pol := Policy{Home: home}

	tests := []struct {
		name, path string
		ok         bool
		want       string // in the error
	}{
		{"relative", "proj/main.go", false, "FULL absolute paths"},
		{"dot relative", "./main.go", false, "FULL absolute paths"},
		{"root", "/", false, "filesystem root"},
		{"etc", "/etc", false, "system directory"},
		{"etc subpath", "/etc/passwd", false, "system directory"},
		{"etc deep subpath", "/etc/ssl/certs", false, "system directory"},
		{"usr", "/usr/bin/env", false, "system directory"},
		{"var", "/var/log/syslog", false, "system directory"},
		{"root's home", "/root/.ssh/id_rsa", false, "system directory"},
		{"proc", "/proc/self/environ", false, "system directory"},
		{"home parent", "/home", false, "home directory root"},
		{"another user's home", "/home/someone", false, "home directory root"},
		{"a mac home", "/Users/someone", false, "home directory root"},
		{"own home root", home, false, "home directory root"},
		{"tilde home root", "~", false, "home directory root"},
		{"traversal", proj + "/../../../../etc/passwd", false, "system directory"},
		{"symlink to a system file", filepath.Join(proj, "passwd-link"), false, "which is /etc/passwd"},
		{"symlink to a system dir", filepath.Join(proj, "etc-link", "hosts"), false, "system directory"},
		{"symlink to the home root", filepath.Join(proj, "home-link"), false, "home directory root"},
		{"project file", filepath.Join(proj, "main.go"), true, ""},
		{"tilde project file", "~/proj/main.go", true, ""},
		{"symlink inside the project", filepath.Join(proj, "main-link.go"), true, ""},
		{"unicode names", filepath.Join(proj, "données", "café.go"), true, ""},
		{"a missing file in the project", filepath.Join(proj, "nope.go"), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pol.Resolve(tt.path)
			if tt.ok {
				if err != nil {
					t.Errorf("Resolve(%q) = %v, want allowed", tt.path, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Resolve(%q) = %v, want an error containing %q", tt.path, err, tt.want)
			}
		})
	}

	t.Run("very long names fail clearly", func(t *testing.T) {
		long := filepath.Join(proj, strings.Repeat("x", 300)+".go")
		if _, err := pol.Read(long); err == nil || !strings.Contains(err.Error(), "cannot read") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("expansion follows no link out of the project and skips hidden files", func(t *testing.T) {
		got, err := pol.Expand([]string{proj})
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(got, "\n")
		if strings.Contains(joined, "/etc") || strings.Contains(joined, ".env") || !strings.Contains(joined, "café.go") {
			t.Errorf("expanded to:\n%s", joined)
		}
	})
	t.Run("zen's own directory is not scanned", func(t *testing.T) {
		got, err := Policy{Home: home, InstallDir: filepath.Join(proj, "données")}.Expand([]string{proj})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(got, "\n"), "café.go") {
			t.Errorf("scanned the install directory: %v", got)
		}
	})
	t.Run("denials are ErrDenied", func(t *testing.T) {
		if _, err := pol.Read("/etc/hostname"); !errors.Is(err, ErrDenied) {
			t.Errorf("err = %v", err)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
