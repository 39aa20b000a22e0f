package provider

import (
	"encoding/json"
	"strings"
	"testing"
)

func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain text of some length", "\"quoted\" \\ back", "<b>&amp;</b>", "\x00\x01\x1f\x7f",
		"\b\f\n\r\t", "é 中 🙂", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", "12345678<2345678", strings.Repeat("ab\"", 9)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendQuoted([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendQuoted(%q) = %s, want %s", s, got[1:], want)
		}
	})
}

// BenchmarkAppendQuoted quotes 100 KB of prose and code, as a request's
// history is, with encoding/json's encoder and with appendQuoted.
//
//	go test -run '^$' -bench AppendQuoted -benchmem ./services/router/internal/provider
func BenchmarkAppendQuoted(b *testing.B) {
	text := strings.Repeat("The store appends each exchange in one transaction, so a retry finds it. "+
		"func (s *Store) Append(ctx context.Context, id string) error {\n\treturn s.write(ctx, id)\n}\n", 600)
	buf := make([]byte, 0, 2*len(text))
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			out, _ := json.Marshal(text)
			buf = append(buf[:0], out...)
		}
	})
	b.Run("appendQuoted", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			buf = appendQuoted(buf[:0], text)
		}
	})
}
