package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkResolve runs Resolve over cases: want "" means allowed, anything
// else a substring of the refusal.
func checkResolve(t *testing.T, pol Policy, cases []resolveCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := pol.Resolve(tt.path)
			if tt.want == "" {
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
}

type resolveCase struct{ name, path, want string }

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
	pol := NewPolicy(Config{Home: home})

	checkResolve(t, pol, []resolveCase{
		{"relative", "proj/main.go", "FULL absolute paths"},
		{"dot relative", "./main.go", "FULL absolute paths"},
		{"root", "/", "filesystem root"},
		{"etc", "/etc", "system directory"},
		{"etc subpath", "/etc/passwd", "system directory"},
		{"etc deep subpath", "/etc/ssl/certs", "system directory"},
		{"usr", "/usr/bin/env", "system directory"},
		{"var", "/var/log/syslog", "system directory"},
		{"root's home", "/root/.ssh/id_rsa", "system directory"},
		{"proc", "/proc/self/environ", "system directory"},
		{"run", "/run/secrets/token", "system directory"},
		{"home parent", "/home", "home directory root"},
		{"another user's home", "/home/someone", "home directory root"},
		{"a mac home", "/Users/someone", "home directory root"},
		{"own home root", home, "home directory root"},
		{"tilde home root", "~", "home directory root"},
		{"traversal", proj + "/../../../../etc/passwd", "system directory"},
		{"symlink to a system file", filepath.Join(proj, "passwd-link"), "which is /etc/passwd"},
		{"symlink to a system dir", filepath.Join(proj, "etc-link", "hosts"), "system directory"},
		{"symlink to the home root", filepath.Join(proj, "home-link"), "home directory root"},
		{"project file", filepath.Join(proj, "main.go"), ""},
		{"tilde project file", "~/proj/main.go", ""},
		{"symlink inside the project", filepath.Join(proj, "main-link.go"), ""},
		{"unicode names", filepath.Join(proj, "données", "café.go"), ""},
		{"a missing file in the project", filepath.Join(proj, "nope.go"), ""},
	})

	t.Run("very long names fail clearly", func(t *testing.T) {
		long := filepath.Join(proj, strings.Repeat("x", 300)+".go")
		if _, err := pol.Read(long); err == nil || !strings.Contains(err.Error(), "cannot be read: file name too long") {
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
		got, err := NewPolicy(Config{Home: home, InstallDir: filepath.Join(proj, "données")}).Expand([]string{proj})
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

// TestAHomeAtTheRootOfTheDiskIsNoRoot: a service account or a container
// without a home of its own runs with HOME=/, and the default root, the
// home, was then the whole disk: other users' projects, /tmp, /opt, /srv.
// Files are read there only from roots named in ZEN_FILE_ROOTS.
func TestAHomeAtTheRootOfTheDiskIsNoRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "app.py")
	write(t, file, "print('hello')\n")
	_, err := NewPolicy(Config{Home: "/"}).Resolve(file)
	if err == nil || !strings.Contains(err.Error(), "ZEN_FILE_ROOTS") || !strings.Contains(err.Error(), "HOME=/") {
		t.Errorf("HOME=/: Resolve(%s) = %v; want it refused, naming ZEN_FILE_ROOTS and saying why", file, err)
	}
	if _, err := NewPolicy(Config{Home: "/", Roots: []string{dir}}).Resolve(file); err != nil {
		t.Errorf("HOME=/ with %s a root: %v", dir, err)
	}
}
