package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zenmcp/zen/services/platform/config"
	routerserver "github.com/zenmcp/zen/services/router/server"
)

// dotEnvFiles are the .env files role reads, in precedence order: the
// working directory's, then the user's (userDotEnv). The process
// environment wins over both (config.WithDotEnvFiles). stdio reads the
// user's alone: an agent starts it in whatever project it opens, and that
// project's .env is the project's, not zen's. Read, a cloned repository's
// .env could send the user's key and every prompt to a provider URL of its
// choosing, or run commands named in a clients file. The paths are
// absolute: messages quote them.
func dotEnvFiles(getenv config.Getenv, role string) []string {
	var files []string
	if role != "stdio" {
		here := dotEnvFile
		if abs, err := filepath.Abs(dotEnvFile); err == nil {
			here = abs
		}
		files = append(files, here)
	}
	if user := userDotEnv(getenv); user != "" && !slices.Contains(files, user) {
		files = append(files, user)
	}
	return files
}

// noteUnreadDotEnv tells, once, that stdio left the working directory's
// .env unread: settings kept there before were read, and are gone without
// a word otherwise.
func noteUnreadDotEnv(logger *slog.Logger, role string, read []string) {
	if role != "stdio" {
		return
	}
	if _, err := os.Stat(dotEnvFile); err != nil {
		return
	}
	user := "$XDG_CONFIG_HOME/zen/.env"
	if len(read) > 0 {
		user = read[0]
	}
	logger.Warn("zen stdio does not read the working directory's .env, a project's: put zen's settings in "+user+
		" or in the agent's configuration", "ignored", dotEnvFile)
}

// userDotEnv is the user-level .env, where the XDG base directory
// specification puts configuration: $XDG_CONFIG_HOME/zen/.env, else
// ~/.config/zen/.env (a relative XDG_CONFIG_HOME is ignored, as the
// specification says). "" when neither variable is set.
func userDotEnv(getenv config.Getenv) string {
	if dir := strings.TrimSpace(getenv("XDG_CONFIG_HOME")); filepath.IsAbs(dir) {
		return filepath.Join(dir, "zen", ".env")
	}
	if home := strings.TrimSpace(getenv("HOME")); home != "" {
		return filepath.Join(home, ".config", "zen", ".env")
	}
	return ""
}

// absoluteConfigPaths refuses a relative path in the variables that name
// zen's own files (ownFileVars, the model catalogues), for stdio: it runs
// in whatever project the agent opens, so a relative path (the
// reference's conf/... form) names a file of that project's, and a cloned
// repository's clients file would run its commands under clink.
func absoluteConfigPaths(getenv config.Getenv) error {
	for _, v := range slices.Concat(ownFileVars, routerserver.CatalogueVars()) {
		if p := strings.TrimSpace(getenv(v)); p != "" && !filepath.IsAbs(p) {
			return fmt.Errorf("%s=%q is a relative path: zen stdio runs in whatever project your agent opens, so "+
				"it would name a file of that project's; give the absolute path of your own file", v, p)
		}
	}
	return nil
}
