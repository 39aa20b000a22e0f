package files

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zenmcp/zen/services/platform/tokens"
)

// checkedHook runs between a path's checks and its read: the tests put a
// racing process's renames there.
var checkedHook = func(resolved string) {}

// MaxFileBytes is the largest file read; larger ones are skipped.
const MaxFileBytes = 1_000_000

// File is one file as read now.
type File struct {
	Path string
	// SHA256 is the hash of Content, the text as sent and stored: for a
	// file with CRLF or CR line endings, or bytes that are not UTF-8, not
	// that of its bytes on disk, and a change of line endings alone is no
	// change.
	SHA256   string
	Content  string
	Size     int64 // on disk
	Modified time.Time
}

// Tokens is the file's estimated cost.
func (f File) Tokens() int64 { return tokens.Estimate(f.Content) }

// ExpandHome turns a leading ~ into the home directory.
func ExpandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// MaxPathBytes bounds a path a call names: no file's is longer (Linux's
// PATH_MAX), and a refusal quotes the path it refuses. One of 4 MB, quoted
// and then encoded twice, made an answer of 32 MB.
const MaxPathBytes = 4096

// TooLong refuses a path longer than MaxPathBytes, without quoting it.
func TooLong(p string) error {
	if len(p) <= MaxPathBytes {
		return nil
	}
	return fmt.Errorf("a path of %d bytes is longer than any file's can be (%d bytes): name the file by its own "+
		"path", len(p), MaxPathBytes)
}

// CheckAbsolute returns an error naming the first path that is too long
// or not absolute.
func CheckAbsolute(paths []string) error {
	for _, p := range paths {
		if err := TooLong(p); err != nil {
			return err
		}
		if !filepath.IsAbs(ExpandHome(p)) {
			return fmt.Errorf("all file paths must be FULL absolute paths to real files or folders; received %q", p)
		}
	}
	return nil
}

// excludedDirs are never walked into: dependencies, build output, caches.
var excludedDirs = []string{
	"__pycache__", "venv", "env", "node_modules", "bower_components", "build", "dist", "target", "out",
	"coverage", "htmlcov", "vendor", "site", "_build", "wheels",
}

// sourceExts are the extensions picked up when walking a directory; files
// named explicitly are read whatever their extension.
var sourceExts = []string{
	".go", ".py", ".js", ".jsx", ".ts", ".tsx", ".java", ".kt", ".kts", ".scala", ".rs", ".c", ".h", ".cc", ".cpp",
	".hpp", ".cs", ".rb", ".php", ".swift", ".m", ".mm", ".sh", ".bash", ".zsh", ".ps1", ".sql", ".proto", ".graphql",
	".html", ".css", ".scss", ".vue", ".svelte", ".md", ".rst", ".txt", ".json", ".yaml", ".yml", ".toml", ".ini",
	".cfg", ".conf", ".xml", ".gradle", ".tf", ".lua", ".r", ".dart", ".ex", ".exs", ".erl", ".hs", ".clj", ".mk",
}

// Expand turns paths into the files to read: files as given, directories
// walked for source files (sorted, hidden entries, dependency folders,
// denied places and zen's own directory skipped; links followed only to
// files the policy allows). Every path is resolved and checked first.
// Duplicates are dropped; order is kept. ExpandWithin is the same under a
// budget.
func (pol Policy) Expand(paths []string) ([]string, error) {
	exp, err := pol.ExpandWithin(paths, math.MaxInt64, AllNamed)
	return exp.Paths, err
}

// walk calls found with each source file under dir and its size, in walk
// order, until found returns false.
func (pol Policy) walk(dir string, found func(path string, size int64) bool) error {
	resolvedDir := resolveExisting(dir)
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped, not fatal
		}
		name := d.Name()
		// Everything the walk finds passes the deny rules too: a project
		// may hold zen's tokens file or a key under a plain name.
		// A name that is not UTF-8 cannot travel between zen's roles (a
		// path is text there), and no client could name it either.
		skip := path != dir && walkSkips(name, d.IsDir()) ||
			d.IsDir() && pol.insideInstall(path) || path != dir && pol.denied(path) != "" || !utf8.ValidString(name)
		if skip {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !isSource(name) {
			return nil
		}
		var info fs.FileInfo
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			// A link inside a project may point anywhere: follow it only
			// to a file the policy allows, and that the walk would have
			// found itself (a cloned repository's link to ../.config/hub
			// went to the model with the project).
			target, err := pol.Resolve(path)
			if err != nil || !utf8.ValidString(target) || !walkedTo(resolvedDir, target) {
				return nil
			}
			if info, err = os.Stat(target); err != nil || !info.Mode().IsRegular() {
				return nil
			}
			path = target
		case d.Type().IsRegular():
			if info, err = d.Info(); err != nil {
				return nil
			}
		default:
			return nil
		}
		if !found(path, info.Size()) {
			return filepath.SkipAll
		}
		return nil
	})
}

// walkedTo reports whether a walk of dir (resolved) reaches target (a
// link's, resolved) and reads it: below dir, on no hidden or excluded path,
// and a source file by its own name.
func walkedTo(dir, target string) bool {
	if !isSource(target) {
		return false
	}
	rel, err := filepath.Rel(dir, target)
	if err != nil || !filepath.IsLocal(rel) {
		return false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		if walkSkips(part, i < len(parts)-1) {
			return false
		}
	}
	return true
}

// walkSkips reports whether a walk leaves out an entry named name (a
// directory, when dir) below the directory it walks, by its name alone:
// hidden, or a dependency or build directory.
func walkSkips(name string, dir bool) bool {
	return strings.HasPrefix(name, ".") || dir && slices.Contains(excludedDirs, name)
}

// isSource reports whether a walk reads a file named path: a source or
// text file, by its extension.
func isSource(path string) bool {
	return slices.Contains(sourceExts, strings.ToLower(filepath.Ext(path)))
}

// Read reads one file after checking it against the policy, normalising
// line endings and replacing invalid UTF-8. The file keeps the path it was
// given as its label. A file the call can go on without (missing,
// unreadable, not a regular file, over MaxFileBytes) is a *Skipped error;
// a path the policy refuses is not.
func (pol Policy) Read(path string) (File, error) {
	resolved, err := pol.Resolve(path)
	if err != nil {
		return File{}, err
	}
	if _, err := checkFile(path, resolved, false); err != nil {
		return File{}, err
	}
	checkedHook(resolved)
	f, info, err := pol.openChecked(path, resolved, MaxFileBytes)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	raw, err := readAtMost(f, path, MaxFileBytes)
	if err != nil {
		return File{}, err
	}
	switch {
	case holdsPrivateKey(raw):
		return File{}, &Skipped{Path: path, Reason: "holds a private key, which zen never sends to a model"}
	case binaryKey(path, raw):
		return File{}, &Skipped{Path: path, Reason: "is not text, and a file of that name may hold a private key, " +
			"which zen never sends to a model"}
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\r", "\n")
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	// The hash is the text's, as sent and stored: memory keeps a file under
	// the hash of what it holds, and refuses one whose text does not match.
	sum := sha256.Sum256([]byte(text))
	return File{Path: path, SHA256: hex.EncodeToString(sum[:]), Content: text, Size: info.Size(),
		Modified: info.ModTime()}, nil
}

// ReadEach reads an expansion's files, listing those it goes without (see
// Read) under the paths the call gave (exp.Labels). It fails only on a
// path the policy refuses: a link may have moved since the path was
// checked.
func (pol Policy) ReadEach(exp Expansion) ([]File, []Skipped, error) {
	out := make([]File, 0, len(exp.Paths))
	var skipped []Skipped
	for _, p := range exp.Paths {
		f, err := pol.Read(p)
		if s, ok := asSkipped(err); ok {
			if label, named := exp.Labels[p]; named {
				s.Path = label
			}
			skipped = append(skipped, s)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, f)
	}
	return out, skipped, nil
}
