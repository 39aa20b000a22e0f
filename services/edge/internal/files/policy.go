package files

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Config is what a Policy is built from.
type Config struct {
	// Home is the user's home directory: its root is never read, and it is
	// the default root on one person's machine.
	Home string
	// InstallDir is zen's own directory: never scanned.
	InstallDir string
	// Roots are the directories clients may name (ZEN_FILE_ROOTS). Empty
	// means Home, unless Shared is set.
	Roots []string
	// Shared, when set, says why this zen serves clients whose disk is not
	// its own (a tokens file names them, or MCP listens beyond loopback).
	// Their paths then name nothing here: without Roots every path is
	// refused, and nothing is ever written.
	Shared string
	// Own are the files and directories zen reads its configuration and
	// secrets from: never read for a client, wherever they are.
	Own []string
	// AgentCLIs lets clients of a shared server run agent CLIs (clink):
	// they act with zen's user's rights on this disk, past every rule here
	// (ZEN_CLINK_ON_SHARED).
	AgentCLIs bool
}

// Policy decides which paths may be read and written. Checks apply to the
// path as it resolves (".." cleaned, symlinks followed), so neither
// traversal nor a link can reach a denied place or leave the roots.
type Policy struct {
	home, install string
	// foldedHome is home cleaned and in lower case, as deny rules compare
	// paths; "" without a home, or with one at the disk's root.
	foldedHome string
	// roots are resolved; rootsNamed says where they came from, for
	// messages.
	roots      []string
	rootsNamed string
	shared     string
	own        []string
	agentCLIs  bool
	// rootsGiven are the roots as configured, before links were resolved:
	// a path is first checked against them (or the resolved ones) before
	// the disk is touched.
	rootsGiven []string
}

// NewPolicy resolves the configuration's paths once, so each check
// compares resolved paths with resolved paths.
func NewPolicy(c Config) Policy {
	p := Policy{home: c.Home, install: c.InstallDir, shared: c.Shared, rootsNamed: "ZEN_FILE_ROOTS",
		agentCLIs: c.AgentCLIs}
	if c.Home != "" && c.Home != "/" {
		p.foldedHome = strings.ToLower(filepath.Clean(c.Home))
	}
	roots := c.Roots
	// A home at the disk's root (HOME=/, as service accounts and containers
	// without a home of their own have) would make the whole disk a root.
	if len(roots) == 0 && c.Shared == "" && c.Home != "" && resolveExisting(c.Home) != "/" {
		roots, p.rootsNamed = []string{c.Home}, "your home directory, the default"
	}
	for _, r := range roots {
		p.roots = append(p.roots, resolveExisting(r))
		if abs, err := filepath.Abs(r); err == nil {
			p.rootsGiven = append(p.rootsGiven, abs)
		}
	}
	for _, o := range c.Own {
		if o == "" {
			continue
		}
		if abs, err := filepath.Abs(o); err == nil {
			o = abs
		}
		p.own = append(p.own, filepath.Clean(o)) // resolved at each check: links move (a Secret's, on rotation)
	}
	return p
}

// resolveExisting resolves links in an absolute path, keeping it cleaned
// when it does not exist (yet).
func resolveExisting(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// Writes reports whether zen may write into a client's working directory:
// only on one person's machine.
func (p Policy) Writes() bool { return p.shared == "" }

// Shared says why this zen is a shared server, or "".
func (p Policy) Shared() string { return p.shared }

// RunsAgentCLIs reports whether clients may run agent CLIs here: an agent
// CLI acts with zen's user's rights on this disk, past every rule of this
// policy, so a shared server allows it only when told to.
func (p Policy) RunsAgentCLIs() bool { return p.shared == "" || p.agentCLIs }

// ErrDenied is a path the policy refuses.
var ErrDenied = errors.New("access denied")

// Resolve expands ~, requires an absolute path, resolves it and checks it
// against the roots and the denied places. A path that does not exist is
// returned cleaned, for the caller's not-found error; its parent's links
// are still resolved and checked.
func (p Policy) Resolve(path string) (string, error) {
	if err := TooLong(path); err != nil {
		return "", err
	}
	expanded := ExpandHome(path)
	if !filepath.IsAbs(expanded) {
		return "", fmt.Errorf("all file paths must be FULL absolute paths to real files or folders; received %q", path)
	}
	if len(p.roots) == 0 {
		// Refused before the disk is touched: a client learns nothing of
		// a disk that is not its own.
		return "", p.noRoots(path)
	}
	if cleaned := filepath.Clean(expanded); !p.inRoots(cleaned) && !p.inGivenRoots(cleaned) {
		// Nor of what lies outside the roots: no link is followed, so the
		// message cannot tell where one leads.
		if reason := p.deniedByName(cleaned); reason != "" {
			return "", fmt.Errorf("%w: %s %s; %s", ErrDenied, cleaned, reason, leaveOut)
		}
		return "", p.outsideRoots(path)
	}
	resolved, err := filepath.EvalSymlinks(expanded)
	if err != nil {
		// The path, or a link on its way, leads to nothing (yet). It is
		// checked as far as it exists, links followed even to missing
		// targets, so that what lies past a link out of the roots does not
		// change the answer: a link to a missing file out there is refused
		// as one to an existing file is, never "not found".
		partial, perr := resolveAsFarAsExists(filepath.Clean(expanded))
		switch {
		case perr == nil:
			resolved = partial
		case !p.inRoots(partial):
			return "", p.outsideRoots(describePath(path, partial))
		default:
			// Where it leads is unknown (a loop, a name that cannot be
			// looked up), so nothing is read; a name the policy denies is
			// still refused, not merely skipped.
			if reason := p.denied(filepath.Clean(expanded)); reason != "" {
				return "", fmt.Errorf("%w: %s %s; %s", ErrDenied, path, reason, leaveOut)
			}
			return "", statFailure(path, err)
		}
	}
	if reason := p.denied(resolved); reason != "" {
		return "", fmt.Errorf("%w: %s %s; %s", ErrDenied, describePath(path, resolved), reason, leaveOut)
	}
	if !p.inRoots(resolved) {
		return "", p.outsideRoots(describePath(path, resolved))
	}
	return resolved, nil
}

// leaveOut is what a refusal of a denied path says to do.
const leaveOut = "zen never reads such a file: leave it out of the call"

func (p Policy) outsideRoots(what string) error {
	return fmt.Errorf("%w: %s is outside the directories zen may read (%s: %s); pass files under them, "+
		"or add the directory to ZEN_FILE_ROOTS", ErrDenied, what, p.rootsNamed, strings.Join(p.roots, ", "))
}

func (p Policy) inGivenRoots(path string) bool {
	for _, r := range p.rootsGiven {
		if within(path, r) {
			return true
		}
	}
	return false
}

// noRoots is the refusal when no directory may be named at all.
func (p Policy) noRoots(path string) error {
	if p.shared != "" {
		return fmt.Errorf("%w: %s: zen reads no files on this server: it is shared (%s), so its disk is not "+
			"yours, and ZEN_FILE_ROOTS is not set. Put what the model needs in the prompt instead, or ask the "+
			"operator to set ZEN_FILE_ROOTS to the directories clients may name", ErrDenied, path, p.shared)
	}
	if p.home != "" {
		return fmt.Errorf("%w: %s: zen reads no files: ZEN_FILE_ROOTS is not set, and the home directory, the "+
			"default, is the disk's root (HOME=%s), which would let clients read the whole disk; set "+
			"ZEN_FILE_ROOTS to the directories clients may name", ErrDenied, path, p.home)
	}
	return fmt.Errorf("%w: %s: zen reads no files: ZEN_FILE_ROOTS is not set and there is no home directory "+
		"(HOME) to default to; set ZEN_FILE_ROOTS to the directories clients may name", ErrDenied, path)
}

func (p Policy) inRoots(path string) bool {
	for _, r := range p.roots {
		if within(path, r) {
			return true
		}
	}
	return false
}

// within tells whether path is dir or below it (both cleaned).
func within(path, dir string) bool {
	if dir == string(filepath.Separator) {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

func describePath(given, resolved string) string {
	if filepath.Clean(ExpandHome(given)) == resolved {
		return resolved
	}
	return fmt.Sprintf("%s (which is %s)", given, resolved)
}

// insideInstall tells whether a resolved path is zen's own directory or
// below it.
func (p Policy) insideInstall(path string) bool {
	return p.install != "" && within(path, filepath.Clean(p.install))
}
