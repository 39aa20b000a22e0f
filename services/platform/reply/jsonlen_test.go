package reply

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzJSONLen: JSONLen is what json.Marshal writes between the quotes,
// and PrefixWithin's start stays within its bound and ends where a
// character (or a byte that is none, written as one) starts.
func FuzzJSONLen(f *testing.F) {
	for _, s := range []string{"", "plain", `<b>a & b</b>`, "q\"\\\n\r\t\b\f\x01\x1f", "é\u2028\u2029x",
		"bad\xff\xfe", "日本語", strings.Repeat("<", 100)} {
		f.Add(s, 7)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := JSONLen(s), len(b)-2; got != want {
			t.Fatalf("JSONLen(%q) = %d, json.Marshal writes %d", s, got, want)
		}
		n = max(n, -1) % (len(b) + 2)
		p := PrefixWithin(s, n)
		i := 0
		for i < len(p) {
			_, size := jsonRuneLen(s[i:])
			i += size
		}
		if !strings.HasPrefix(s, p) || JSONLen(p) > max(n, 0) || i != len(p) {
			t.Fatalf("PrefixWithin(%q, %d) = %q", s, n, p)
		}
		if p != s {
			if _, size := jsonRuneLen(s[len(p):]); JSONLen(s[:len(p)+size]) <= n {
				t.Fatalf("PrefixWithin(%q, %d) = %q stops short", s, n, p)
			}
		}
	})
}
