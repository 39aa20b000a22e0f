package tools

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIntegerArgumentsAreBounded: every integer argument of every tool, at
// any depth, has a minimum and a maximum, so the edge refuses 2^63 before
// it can wrap to a negative step number.
func TestIntegerArgumentsAreBounded(t *testing.T) {
	t.Parallel()
	for _, auto := range []bool{true, false} {
		for _, tool := range All() {
			var unbounded []string
			walkIntegers(tool.Schema(goldenCatalog(auto)), tool.Name, func(path string, s map[string]any) {
				_, lo := s["minimum"]
				_, hi := s["maximum"]
				if !lo || !hi {
					unbounded = append(unbounded, path)
				}
			})
			if diff := cmp.Diff([]string(nil), unbounded); diff != "" {
				t.Errorf("auto=%v: integers without both bounds (-want +got):\n%s", auto, diff)
			}
		}
	}
}

// walkIntegers calls f on every schema of type integer under s.
func walkIntegers(s map[string]any, path string, f func(string, map[string]any)) {
	if s["type"] == "integer" {
		f(path, s)
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				walkIntegers(ps, path+"."+name, f)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		walkIntegers(items, fmt.Sprint(path, "[]"), f)
	}
}
