package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	memoryserver "github.com/zenmcp/zen/services/memory/server"
	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/platform/logfile"
)

// zen's log file holds up to logFileMax bytes, with logFileKeep older
// files beside it (zen.log.1, zen.log.2): enough for days of calls at one
// line each, small enough to forget about.
const (
	logFileMax  = 10 << 20
	logFileKeep = 2
)

// logSink is where a role's log goes: stderr, and a file when there is
// one.
type logSink struct {
	w    io.Writer
	path string // the file, "" for none
	// problem says why the default file could not be opened; the role
	// runs on, logging to stderr alone.
	problem error
	file    *logfile.File
}

// openLog opens the role's log: stderr, and the file at ZEN_LOG_FILE
// (--log-file, flagValue) when set, none when it is "off". Otherwise
// stdio, whose agent hides stderr, logs to zen.log in the state directory
// (ZEN_DATA_DIR, else $XDG_STATE_HOME/zen, else ~/.local/state/zen); a
// default file that cannot be opened is a warning, a file asked for an
// error.
func openLog(role, flagValue string, getenv config.Getenv) (*logSink, error) {
	path, err := logFilePath(role, flagValue, getenv)
	if err != nil || path == "" {
		return &logSink{w: os.Stderr}, err
	}
	f, err := logfile.Open(path, logFileMax, logFileKeep)
	switch {
	case err == nil:
		return &logSink{w: tee{f, os.Stderr}, path: path, file: f}, nil
	case strings.TrimSpace(flagValue) != "":
		return nil, fmt.Errorf("ZEN_LOG_FILE=%q: %w", flagValue, err)
	}
	return &logSink{w: os.Stderr, problem: fmt.Errorf("no log file (set ZEN_LOG_FILE to choose one): %w", err)}, nil
}

// report says in the log where else it goes, or why nowhere, and warns
// when the file's directory lets other users replace the file.
func (s *logSink) report(logger *slog.Logger) {
	switch {
	case s.problem != nil:
		logger.Warn("log file", "err", s.problem)
	case s.path != "":
		logger.Info("log file", "path", s.path, "max_bytes", logFileMax, "older_files", logFileKeep)
	}
	if s.file != nil && s.file.DirProblem() != nil {
		logger.Warn("log file directory", "err", s.file.DirProblem())
	}
}

// close closes the file, after the role's last line.
func (s *logSink) close() {
	if s.file != nil {
		_ = s.file.Close()
	}
}

// logFilePath is the file a role logs to besides stderr, or "" for none
// (see openLog).
func logFilePath(role, flagValue string, getenv config.Getenv) (string, error) {
	switch v := strings.TrimSpace(flagValue); {
	case strings.EqualFold(v, "off"):
		return "", nil
	case v != "" && !filepath.IsAbs(v):
		return "", fmt.Errorf("ZEN_LOG_FILE=%q: want an absolute path, or off for no log file", v)
	case v != "":
		return v, nil
	}
	if role != "stdio" {
		return "", nil
	}
	if dir := memoryserver.DataDir(getenv); dir != "" {
		return filepath.Join(dir, "zen.log"), nil
	}
	return "", nil // no home to keep it in: stderr alone, as for the other roles
}

// logFiles are the files the log ZEN_LOG_FILE names rotates through, for
// keeping clients away from them (the default one is in the state
// directory, which they cannot name anyway).
func logFiles(flagValue string) []string {
	path := strings.TrimSpace(flagValue)
	if !filepath.IsAbs(path) {
		return nil
	}
	return logfile.Files(path, logFileKeep)
}

// tee writes each line to every writer, so that one that fails (a closed
// stderr) costs no other its line.
type tee []io.Writer

func (t tee) Write(p []byte) (int, error) {
	var first error
	for _, w := range t {
		if _, err := w.Write(p); err != nil && first == nil {
			first = err
		}
	}
	return len(p), first
}
