package call

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zenmcp/zen/services/edge/internal/files"
)

// checkWorkingDirectory requires an absolute working directory and, where
// zen writes into it (one person's machine), one that exists inside the
// roots. On a shared server it is the client's directory, on the client's
// disk: only a name here, never looked up. A directory that passed is not
// looked up again for dirCheckLasts.
func (r *Runner) checkWorkingDirectory(tool string, args map[string]any) *Outcome {
	wd, ok := args["working_directory_absolute_path"].(string)
	if !ok {
		return nil
	}
	if err := files.TooLong(wd); err != nil {
		return ptr(toolError(tool, "Error: working_directory_absolute_path: "+err.Error(), nil))
	}
	p := files.ExpandHome(wd)
	if !filepath.IsAbs(p) {
		return ptr(toolError(tool, fmt.Sprintf("Error: working_directory_absolute_path must be a FULL absolute path "+
			"to an existing directory; received %q", wd), nil))
	}
	if _, passed := r.dirs.get(p); passed || !r.files.Writes() {
		return nil
	}
	resolved, err := r.files.Resolve(p)
	if err != nil {
		return ptr(toolError(tool, "Error: working_directory_absolute_path: "+err.Error(), nil))
	}
	if info, err := os.Stat(resolved); err != nil || !info.IsDir() {
		return ptr(toolError(tool, fmt.Sprintf("Error: working_directory_absolute_path %q is not an existing "+
			"directory; pass the project directory's absolute path", wd), nil))
	}
	r.dirPassed(p)
	return nil
}

// dirPassed remembers that dir passed the check, unless its name is longer
// than a path can be.
func (r *Runner) dirPassed(dir string) {
	if len(dir) <= maxCheckedDirLen {
		r.dirs.put(dir, struct{}{})
	}
}

// Resolving a working directory looks up each of its parts on disk, about
// a twentieth of a continued call's CPU, and an agent names the same one on
// every call. The check only answers early what the write of generated
// code (files.Policy.WriteFile) checks again when it writes, so a
// directory that passed may be taken as passing for a little while: one
// removed or relinked meanwhile fails that write, whose message and the
// code go back in the answer. A failure is never remembered, so a
// directory made after it counts at once.
const (
	dirCheckLasts = 5 * time.Second
	// maxCheckedDirs and maxCheckedDirLen bound what a client naming many,
	// or long, directories can make the edge keep.
	maxCheckedDirs   = 64
	maxCheckedDirLen = 4096 // PATH_MAX on Linux
)
