package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the links one path may pass through, as the kernel's own
// limit does (40 on Linux).
const maxLinks = 40

// resolveAsFarAsExists resolves the links in path (absolute, cleaned) as
// filepath.EvalSymlinks does, except that a missing name ends the walk
// instead of failing it: the rest is joined as given. A link is followed
// to its target whether that exists or not, so a dangling link resolves to
// where it points. On any other failure (a loop, a name that cannot be
// looked up) it returns the error with the part it resolved, which exists.
func resolveAsFarAsExists(path string) (string, error) {
	sep := string(filepath.Separator)
	vol := filepath.VolumeName(path)
	resolved := vol + sep
	todo := strings.Split(path[len(vol):], sep)
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		info, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return filepath.Join(append([]string{next}, todo...)...), nil
		case err != nil:
			return resolved, err
		case info.Mode()&fs.ModeSymlink == 0:
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return resolved, fmt.Errorf("lstat %s: more than %d links on the way", path, maxLinks)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return resolved, err
		}
		if filepath.IsAbs(target) {
			vol = filepath.VolumeName(target)
			resolved, target = vol+sep, target[len(vol):]
		}
		todo = append(strings.Split(target, sep), todo...)
	}
	return resolved, nil
}
