//go:build !unix

package logfile

import "os"

// noFollow is none where the system has no O_NOFOLLOW: openPrivate's check
// before opening is what refuses a link there.
const noFollow = 0

// notOwned cannot tell a file's owner or links here.
func notOwned(os.FileInfo, int) string { return "" }

// dirRisk has no Unix permissions to read here.
func dirRisk(string) error { return nil }
