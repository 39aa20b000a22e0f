package main

import "runtime/debug"

// lastUpdated is the date (YYYY-MM-DD) of the commit the binary was built
// from: as make build stamps it (updated), else as the Go toolchain
// stamps a build from a git tree; "unknown" for a build without one.
func lastUpdated() string {
	if updated != "" {
		return updated
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.time" && len(s.Value) >= len("2006-01-02") {
				return s.Value[:len("2006-01-02")]
			}
		}
	}
	return "unknown"
}
