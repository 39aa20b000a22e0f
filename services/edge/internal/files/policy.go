package files

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Policy decides which paths may be read. Checks apply to the path as it
// resolves (".." cleaned, symlinks followed), so neither traversal nor a
// link can reach a denied place.
type Policy struct {
	Home       string // the user's home directory: its root is never read
	InstallDir string // zen's own directory: never scanned
}

// ErrDenied is a path the policy refuses.
var ErrDenied = errors.New("access denied")

// systemDirs are denied with everything below them.
var systemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/var", "/root", "/boot", "/proc", "/sys", "/dev", "/private/etc", "/private/var"}

// homeParents hold home directories: the parent itself and each direct
// child (a whole home) are denied; deeper paths are a project's.
var homeParents = []string{"/home", "/Users"}

// Resolve expands ~, requires an absolute path, resolves it and checks it.
// A path that does not exist is returned cleaned, for the caller's
// not-found error; its parent's links are still resolved and checked.
func (p Policy) Resolve(path string) (string, error) {
	expanded := ExpandHome(path)
	if !filepath.IsAbs(expanded) {
		return "", fmt.Errorf("all file paths must be FULL absolute paths to real files or folders; received %q", path)
	}
	resolved, err := filepath.EvalSymlinks(expanded)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("cannot read %s: %w", path, errors.Unwrap(err))
		}
		dir, rerr := filepath.EvalSymlinks(filepath.Dir(filepath.Clean(expanded)))
		if rerr != nil {
			dir = filepath.Dir(filepath.Clean(expanded))
		}
		resolved = filepath.Join(dir, filepath.Base(expanded))
	}
	if reason := p.denied(resolved); reason != "" {
		return "", fmt.Errorf("%w: %s %s; pass files inside your project instead", ErrDenied, describePath(path, resolved), reason)
	}
	return resolved, nil
}

func describePath(given, resolved string) string {
	if filepath.Clean(ExpandHome(given)) == resolved {
		return resolved
	}
	return fmt.Sprintf("%s (which is %s)", given, resolved)
}

// denied says why a resolved path may not be read, or "".
func (p Policy) denied(path string) string {
	if path == "/" || filepath.VolumeName(path)+`\` == path {
		return "is the filesystem root"
	}
	for _, d := range systemDirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return "is a system directory"
		}
	}
	for _, parent := range homeParents {
		if path == parent || filepath.Dir(path) == parent {
			return "is a home directory root"
		}
	}
	if p.Home != "" && filepath.Clean(p.Home) == path {
		return "is your home directory root"
	}
	return ""
}

// insideInstall tells whether a resolved path is zen's own directory or
// below it.
func (p Policy) insideInstall(path string) bool {
	if p.InstallDir == "" {
		return false
	}
	d := filepath.Clean(p.InstallDir)
	return path == d || strings.HasPrefix(path, d+string(filepath.Separator))
}
