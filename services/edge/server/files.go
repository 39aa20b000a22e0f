package server

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/zenmcp/zen/services/edge/internal/files"
	"github.com/zenmcp/zen/services/platform/config"
)

// FileConfig is what the edge's file policy is built from: which
// directories clients may name, and what is never read or written.
type FileConfig struct {
	// Roots are the directories clients may name (ZEN_FILE_ROOTS, comma
	// separated, absolute existing directories). Empty means the user's
	// home on one person's machine, and none on a shared server.
	Roots []string
	// Shared, set by the binary, says why this edge serves clients whose
	// disk is not its own (a tokens file names them, or MCP listens beyond
	// loopback); "" on one person's machine. A shared edge reads only
	// inside configured roots and writes nothing.
	Shared string
	// Own, set by the binary, are the files and directories zen reads its
	// configuration and secrets from; clients never get them.
	Own []string
	// AgentCLIs lets the clients of a shared edge run clink's agent CLIs
	// (ZEN_CLINK_ON_SHARED), which act with zen's user's rights here.
	AgentCLIs bool
}

// loadFileRoots reads ZEN_FILE_ROOTS. A root that does not exist is an
// error at start, not a policy that silently allows nothing.
func loadFileRoots(getenv config.Getenv) ([]string, error) {
	roots := config.List(getenv, "ZEN_FILE_ROOTS")
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("ZEN_FILE_ROOTS: %q is not an absolute path; list absolute directories, comma separated", r)
		}
		info, err := os.Stat(r)
		if err != nil {
			return nil, fmt.Errorf("ZEN_FILE_ROOTS: %q: %w", r, err)
		}
		if !info.IsDir() {
			return nil, fmt.Errorf("ZEN_FILE_ROOTS: %q is not a directory", r)
		}
	}
	return roots, nil
}

// policy builds the file policy for a user whose home is home.
func (c FileConfig) policy(home string) files.Policy {
	pc := files.Config{Home: home, Roots: c.Roots, Shared: c.Shared, Own: c.Own, AgentCLIs: c.AgentCLIs}
	if exe, err := os.Executable(); err == nil {
		pc.InstallDir = filepath.Dir(exe) // zen never reads its own directory
	}
	return files.NewPolicy(pc)
}
