package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A log file at a planted link is refused: one ZEN_LOG_FILE names stops
// zen with the variable in the error; the default one leaves zen on
// stderr with a warning that says why.
func TestALogFileAtALinkIsRefused(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	victim := filepath.Join(state, "victim")
	if err := os.WriteFile(victim, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(state, "zen", "zen.log")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"ZEN_DATA_DIR": filepath.Dir(link)}[k] }

	_, err := openLog("stdio", link, getenv)
	if err == nil || !strings.Contains(err.Error(), "ZEN_LOG_FILE") || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("ZEN_LOG_FILE at a link: %v, want an error naming the variable and the link", err)
	}

	sink, err := openLog("stdio", "", getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.close()
	if sink.file != nil || sink.problem == nil || !strings.Contains(sink.problem.Error(), link) {
		t.Errorf("the default file at a link: file %v, problem %v; want stderr alone and a problem naming %s",
			sink.file, sink.problem, link)
	}
}

// A log file in a directory every user may write to works, with one
// warning in the log saying so.
func TestALogDirectoryOthersMayWriteIsWarnedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	sink, err := openLog("serve", filepath.Join(dir, "zen.log"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer sink.close()
	var buf bytes.Buffer
	sink.report(slog.New(slog.NewJSONHandler(&buf, nil)))
	var warnings int
	for _, r := range logRecords(buf.String()) {
		if r.Level == "WARN" {
			warnings++
		}
	}
	if warnings != 1 || !strings.Contains(buf.String(), dir) {
		t.Errorf("%d warnings, want one naming %s:\n%s", warnings, dir, buf.String())
	}
}
