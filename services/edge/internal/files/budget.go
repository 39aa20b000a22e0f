package files

import (
	"fmt"
	"slices"
	"time"
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
	// Labels are the paths as the call gave them, by resolved path, for
	// the files in Paths named outright: a file left out later (ReadEach,
	// or a budget checked on the text read) is listed under its label, as
	// ExpandWithin lists the files it skips.
	Labels map[string]string
	// Bytes is the size of Paths, as the file system reports it.
	Bytes   int64
	Omitted Omitted
	// Skipped are the files named outright that are left out: missing,
	// unreadable, not regular files, over MaxFileBytes, or (NewestFirst)
	// past the budget. Files found in directories are counted in Omitted.
	Skipped []Skipped
}

// Omitted is what a directory walk left out to stay within its budget.
type Omitted struct {
	Files int
	Bytes int64
	// AtLeast is set when the walk stopped counting (maxCounted).
	AtLeast bool
}

// Named says how ExpandWithin takes the files a call names outright.
type Named int

const (
	// AllNamed takes every file named outright, past the budget too: the
	// caller refuses them together when they do not fit, as the reference
	// does for a simple tool's files. Their room is set aside before any
	// directory is walked, so a directory named first cannot crowd them
	// out, and they keep the order given.
	AllNamed Named = iota
	// NewestFirst takes the files named outright newest first (by
	// modification time) while they fit, and skips the rest
	// (ReasonOverBudget): a workflow's final step, which goes on with what
	// fits. They come first, newest first, then the directories' files.
	NewestFirst
)

// ExpandWithin is Expand under a budget of maxBytes, decided on sizes
// before anything is read. Files named outright are taken as named says;
// a file named outright that the call can go on without is listed in
// Skipped, and only a path the policy refuses fails. Files found by
// walking a directory are taken in walk order while they fit the room
// left (and are at most MaxFileBytes, the MaxFiles-th at most); the rest
// are counted as omitted.
func (pol Policy) ExpandWithin(paths []string, maxBytes int64, named Named) (Expansion, error) {
	var exp Expansion
	var all, plain []namedPath
	// listed are the files named outright and reported the paths skipped,
	// each once; seen are the paths decided on, so a walk neither repeats
	// nor revives one; taken are the files named outright that go in, with
	// the paths the call gave for them.
	listed, reported, seen, taken := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]string{}
	for _, p := range paths {
		n, err := pol.lookUp(p)
		if err != nil {
			s, ok := asSkipped(err)
			if !ok {
				return Expansion{}, err
			}
			if n.path != "" {
				seen[n.path] = true
			}
			if !reported[s.Path] {
				reported[s.Path] = true
				exp.Skipped = append(exp.Skipped, s)
			}
			continue
		}
		all = append(all, n)
		if !n.dir && !listed[n.path] {
			listed[n.path] = true
			plain = append(plain, n)
		}
	}
	room := maxBytes
	if named == NewestFirst {
		slices.SortStableFunc(plain, func(a, b namedPath) int { return b.modified.Compare(a.modified) })
	}
	for _, g := range plain {
		if named == NewestFirst && g.size > room {
			seen[g.path] = true
			exp.Skipped = append(exp.Skipped, Skipped{Path: g.label, Reason: ReasonOverBudget})
			continue
		}
		taken[g.path] = g.label
		room -= g.size
	}
	take := func(path string, size int64) {
		seen[path] = true
		exp.Paths = append(exp.Paths, path)
		exp.Bytes += size
		if label, ok := taken[path]; ok {
			if exp.Labels == nil {
				exp.Labels = map[string]string{}
			}
			exp.Labels[path] = label
		}
	}
	if named == NewestFirst {
		for _, g := range plain {
			if _, ok := taken[g.path]; ok {
				take(g.path, g.size)
			}
		}
	}
	walked := 0
	for _, g := range distinctDirs(all) {
		if !g.dir {
			if _, ok := taken[g.path]; ok && !seen[g.path] {
				take(g.path, g.size)
			}
			continue
		}
		found := false
		err := pol.walk(g.path, func(path string, size int64) bool {
			found = true
			_, outright := taken[path]
			switch {
			case seen[path]:
			case outright: // its room is set aside already
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
		if !found {
			exp.Skipped = append(exp.Skipped, Skipped{Path: g.label, Reason: ReasonNothingToRead})
		}
		if exp.Omitted.AtLeast {
			break
		}
	}
	return exp, nil
}

// distinctDirs is paths with each directory once, by where it resolves: a
// directory named under fifty spellings (an import's earlier steps may
// name a thousand) was walked fifty times, its files found again each time.
func distinctDirs(paths []namedPath) []namedPath {
	out := make([]namedPath, 0, len(paths))
	dirs := map[string]bool{}
	for _, p := range paths {
		if p.dir {
			if dirs[p.path] {
				continue
			}
			dirs[p.path] = true
		}
		out = append(out, p)
	}
	return out
}

// namedPath is a path a call named outright: a file or a directory.
type namedPath struct {
	path     string // resolved
	label    string // as given
	dir      bool
	size     int64
	modified time.Time
}

// lookUp resolves and checks a path named outright. A file the call can go
// on without is a *Skipped error, with the path resolved when it is known,
// so that a directory walk does not take it either.
func (pol Policy) lookUp(p string) (namedPath, error) {
	resolved, err := pol.Resolve(p)
	if err != nil {
		return namedPath{}, err
	}
	n := namedPath{path: resolved, label: p}
	info, err := checkFile(p, resolved, true)
	if err != nil {
		return n, err
	}
	n.dir, n.size, n.modified = info.IsDir(), info.Size(), info.ModTime()
	return n, nil
}
