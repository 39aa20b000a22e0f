package memory

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// jsonTextLen is the length of s as the stores write it (EncodeTurn).
func FuzzJSONTextLen(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "tab\there\nline\r\\", "\x00\x01\b\f\x1f",
		"\u2028\u2029", "caf\u00e9 \U0001F600", "\xff\xfe bad utf-8 \xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if want := int64(b.Len() - 1); jsonTextLen(s) != want {
			t.Errorf("jsonTextLen(%q) = %d, want %d (%s)", s, jsonTextLen(s), want, b.Bytes())
		}
	})
}

// A turn is stored as its text reads: encoding/json's HTML escapes made a
// turn of '<' six times its size in the store, and in every read.
func TestEncodeTurnKeepsMarkupAsItIs(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("<a>&", 1000)
	b, err := EncodeTurn(Turn{Role: RoleUser, Content: content})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > len(content)+100 {
		t.Errorf("a turn of %d bytes of markup is stored as %d bytes", len(content), len(b))
	}
	var back Turn
	if err := json.Unmarshal(b, &back); err != nil || back.Content != content {
		t.Errorf("the stored turn reads back as %.40q, %v", back.Content, err)
	}
}
