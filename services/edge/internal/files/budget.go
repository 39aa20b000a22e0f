package files

import (
	"errors"
	"fmt"
	"os"
)

// MaxFiles is the most files a directory walk takes for one call: past
// it, files are left out however small, so a tree of tiny files cannot
// fill memory with paths and headers.
const MaxFiles = 2000

// maxCounted bounds the walk itself: past this many files left out, the
// walk stops and the count says "at least".
const maxCounted = 100_000

// Expansion is what a call's paths expand to.
type Expansion struct {
	Paths []string
	// Bytes is the size of Paths, as the file system reports it.
	Bytes   int64
	Omitted Omitted
}

// Omitted is what a directory walk left out to stay within its budget.
type Omitted struct {
	Files int
	Bytes int64
	// AtLeast is set when the walk stopped counting (maxCounted).
	AtLeast bool
}

// ExpandWithin is Expand under a budget of maxBytes, decided on sizes
// before anything is read. Files named outright are always taken: the
// caller refuses them together when they do not fit, as the reference
// does, and their room is set aside before any directory is walked, so a
// directory named first cannot crowd them out. Files found by walking a
// directory are taken in walk order while they fit (and are at most
// MaxFileBytes, the MaxFiles-th at most); the rest are counted as omitted.
func (pol Policy) ExpandWithin(paths []string, maxBytes int64) (Expansion, error) {
	type given struct {
		path string
		dir  bool
		size int64
	}
	var all []given
	named := map[string]bool{}
	room := maxBytes
	for _, p := range paths {
		resolved, err := pol.Resolve(p)
		if err != nil {
			return Expansion{}, err
		}
		info, err := os.Stat(resolved)
		if err != nil {
			return Expansion{}, fmt.Errorf("cannot read %s: %w", resolved, errors.Unwrap(err))
		}
		all = append(all, given{resolved, info.IsDir(), info.Size()})
		if !info.IsDir() && !named[resolved] {
			named[resolved] = true
			room -= info.Size()
		}
	}
	var exp Expansion
	seen := map[string]bool{}
	take := func(path string, size int64) {
		seen[path] = true
		exp.Paths = append(exp.Paths, path)
		exp.Bytes += size
	}
	walked := 0
	for _, g := range all {
		if !g.dir {
			if !seen[g.path] {
				take(g.path, g.size)
			}
			continue
		}
		err := pol.walk(g.path, func(path string, size int64) bool {
			switch {
			case seen[path]:
			case named[path]: // its room is set aside already
				take(path, size)
			case size <= MaxFileBytes && size <= room && walked < MaxFiles:
				take(path, size)
				room -= size
				walked++
			default:
				seen[path] = true
				exp.Omitted.Files++
				exp.Omitted.Bytes += size
				if exp.Omitted.Files >= maxCounted {
					exp.Omitted.AtLeast = true
					return false
				}
			}
			return true
		})
		if err != nil {
			return Expansion{}, fmt.Errorf("walk %s: %w", g.path, err)
		}
		if exp.Omitted.AtLeast {
			break
		}
	}
	return exp, nil
}
