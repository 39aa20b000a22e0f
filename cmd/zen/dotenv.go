package main

import (
	"path/filepath"
	"strings"

	"github.com/zenmcp/zen/services/platform/config"
)

// dotEnvFiles are the .env files zen reads, in precedence order: the
// working directory's, then the user's (userDotEnv), so that `zen stdio`,
// which an agent starts in whatever directory it likes, still finds the
// user's keys. The process environment wins over both
// (config.WithDotEnvFiles). The paths are absolute: messages quote them.
func dotEnvFiles(getenv config.Getenv) []string {
	files := []string{dotEnvFile}
	if abs, err := filepath.Abs(dotEnvFile); err == nil {
		files[0] = abs
	}
	if user := userDotEnv(getenv); user != "" && user != files[0] {
		files = append(files, user)
	}
	return files
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
