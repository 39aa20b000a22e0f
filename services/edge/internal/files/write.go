package files

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNoWrites is a write on a shared server, which writes nothing: its
// disk is not the client's.
var ErrNoWrites = errors.New("zen writes nothing on a shared server")

// WriteFile puts data at name in the client's directory dir, which must be
// inside the roots and allowed, and returns the file's path. It never
// follows a link: the data goes to a new file beside the name, which is
// then renamed over it, and an existing name that is a link or anything
// but a regular file is refused. The directory is held open while writing,
// so swapping it (or a parent) for a link after the check changes nothing.
func (p Policy) WriteFile(dir, name string, data []byte) (string, error) {
	if !p.Writes() {
		return "", fmt.Errorf("%w (%s)", ErrNoWrites, p.shared)
	}
	resolved, err := p.Resolve(dir)
	if err != nil {
		return "", err
	}
	target := filepath.Join(resolved, name)
	if reason := p.denied(target); reason != "" {
		return "", fmt.Errorf("%w: %s %s", ErrDenied, target, reason)
	}
	root, err := os.OpenRoot(resolved)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", dir, innermost(err))
	}
	defer root.Close()
	// A new file is made as editors make one (0644 less the umask); one
	// replaced keeps its mode, so a file its owner made private stays so.
	perm, keep := fs.FileMode(0o644), false
	switch info, err := root.Lstat(name); {
	case err == nil && info.Mode().IsRegular():
		perm, keep = info.Mode().Perm(), true
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("cannot check %s: %w", target, innermost(err))
	case info.Mode()&fs.ModeSymlink != 0:
		return "", fmt.Errorf("%w: %s is a symbolic link; zen never writes through a link: remove it and call again",
			ErrDenied, target)
	case !info.Mode().IsRegular():
		return "", fmt.Errorf("%w: %s exists and is not a regular file: remove it and call again", ErrDenied, target)
	}
	tmp := "." + name + "." + rand.Text() + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", fmt.Errorf("cannot write in %s: %w", resolved, innermost(err))
	}
	if keep { // the umask may have taken bits the old file had
		err = f.Chmod(perm)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// rename replaces the name itself: a link planted since the check
		// is replaced, not followed.
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return "", fmt.Errorf("cannot write %s: %w", target, err)
	}
	return target, nil
}

// innermost is a path error's cause without the path, which the message
// names already; any other error as it is.
func innermost(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
