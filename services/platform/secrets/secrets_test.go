package secrets

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestScrubberString(t *testing.T) {
	t.Parallel()
	s := New("tok-0123456789abcdef", "tok-0123456789abcdef-longer", "short", "", "sk-provider-key-42")
	for _, c := range []struct{ name, in, want string }{
		{"plain", "the token is tok-0123456789abcdef.", "the token is [redacted]."},
		{"longer value first", "x tok-0123456789abcdef-longer y", "x [redacted] y"},
		{"several", "sk-provider-key-42/tok-0123456789abcdef", "[redacted]/[redacted]"},
		{"short values are kept", "a short word", "a short word"},
		{"nothing to do", "hello", "hello"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(c.want, s.String(c.in)); diff != "" {
				t.Errorf("String(%q) (-want +got):\n%s", c.in, diff)
			}
		})
	}
}

func TestNilAndEmptyScrubberKeepText(t *testing.T) {
	t.Parallel()
	var s *Scrubber
	if got := s.String("tok-0123456789abcdef"); got != "tok-0123456789abcdef" {
		t.Errorf("nil scrubber changed text: %q", got)
	}
	if got := New("tiny").String("tiny"); got != "tiny" {
		t.Errorf("a scrubber without secrets changed text: %q", got)
	}
	if New().Empty() != true || New("secret-value-1").Empty() {
		t.Error("Empty is wrong")
	}
}

func TestScrubberValue(t *testing.T) {
	t.Parallel()
	s := New("secret-value-1")
	in := map[string]any{
		"content":  "got secret-value-1",
		"n":        3.0,
		"metadata": map[string]any{"stderr": "secret-value-1", "list": []any{"a", "secret-value-1"}},
	}
	want := map[string]any{
		"content":  "got [redacted]",
		"n":        3.0,
		"metadata": map[string]any{"stderr": "[redacted]", "list": []any{"a", "[redacted]"}},
	}
	if diff := cmp.Diff(want, s.Value(in)); diff != "" {
		t.Errorf("Value (-want +got):\n%s", diff)
	}
}

func TestScrubberMessage(t *testing.T) {
	t.Parallel()
	s := New("secret-value-1")
	msg, err := structpb.NewStruct(map[string]any{
		"content": "secret-value-1 and more",
		"nested":  map[string]any{"items": []any{"x secret-value-1", true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := structpb.NewStruct(map[string]any{
		"content": "[redacted] and more",
		"nested":  map[string]any{"items": []any{"x [redacted]", true}},
	})
	s.Message(msg)
	if diff := cmp.Diff(want, msg, protocmp.Transform()); diff != "" {
		t.Errorf("Message (-want +got):\n%s", diff)
	}
}
