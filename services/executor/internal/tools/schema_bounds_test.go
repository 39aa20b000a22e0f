package tools

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// TestIntegerArgumentsAreBounded: every integer argument of every tool, at
// any depth, has a minimum and a maximum, so the edge refuses 2^63 before
// it can wrap to a negative step number.
func TestIntegerArgumentsAreBounded(t *testing.T) {
	t.Parallel()
	for _, auto := range []bool{true, false} {
		for _, tool := range All() {
			var unbounded []string
			walkIntegers(tool.Schema(goldenCatalog(auto)), tool.Name, func(path string, s *jsonschema.Schema) {
				if s.Minimum == nil || s.Maximum == nil {
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
func walkIntegers(s *jsonschema.Schema, path string, f func(string, *jsonschema.Schema)) {
	if s.Type == "integer" {
		f(path, s)
	}
	for name, p := range s.Properties {
		walkIntegers(p, path+"."+name, f)
	}
	if s.Items != nil {
		walkIntegers(s.Items, path+"[]", f)
	}
}
