package files

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openWithoutLinks opens path, refusing a link anywhere on it (errMoved):
// in one step where the kernel has openat2 (Linux 5.6), else by opening it
// without following its last name and asking the kernel which file that
// is (/proc/self/fd), which names the path without links.
func openWithoutLinks(path string) (*os.File, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{Flags: uint64(openFlags),
		Resolve: unix.RESOLVE_NO_SYMLINKS})
	switch {
	case err == nil:
		return os.NewFile(uintptr(fd), path), nil
	case errors.Is(err, unix.ELOOP):
		return nil, errMoved
	case !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM):
		// EPERM: a seccomp profile that predates openat2 refuses it.
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return openAndAsk(path)
}

// openAndAsk is openWithoutLinks for a kernel without openat2.
func openAndAsk(path string) (*os.File, error) {
	f, err := os.OpenFile(path, openFlags|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, errMoved
	}
	if err != nil {
		return nil, err
	}
	raw, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	var where string
	ctlErr := raw.Control(func(fd uintptr) {
		where, err = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
	})
	if ctlErr != nil || err != nil || where != path {
		_ = f.Close()
		return nil, errMoved
	}
	return f, nil
}
