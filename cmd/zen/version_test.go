package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestMakeStampsTheCommitOnce: make build's version is a release tag or
// "dev", never the commit its commit stamp names again. The Makefile is
// the one place the rule lives; zen prints what it was stamped with.
func TestMakeStampsTheCommitOnce(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("make", "-s", "-n", "-C", "../..", "build").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`-X main\.version=(\S*) -X main\.commit=(\S*) -X main\.updated=(\d{4}-\d{2}-\d{2}|unknown)'`).
		FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("make -n build stamps no version, commit and commit date:\n%s", out)
	}
	if version, commit := m[1], strings.TrimSuffix(m[2], "-dirty"); strings.HasPrefix(version, commit) {
		t.Errorf("make build stamps version %q and commit %q: the commit twice", m[1], m[2])
	}
}
