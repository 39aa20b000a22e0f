package tokens

import (
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
)

// BenchmarkCount counts the project's prose and 40 of its Go files in
// o200k_base: with the tokenizer module alone ("module"), and as Count
// does ("pieces": split here, each piece counted once and remembered).
//
//	go test -run '^$' -bench Count -benchmem ./services/platform/tokens
func BenchmarkCount(b *testing.B) {
	text := strings.Join(append(prose(b), corpus(b, ".go")[:40]...), "\n")
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("module", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := codec.Count(text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pieces", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			Count(O200k, text)
		}
	})
	// Nothing remembered: each count as the first text the process sees.
	b.Run("pieces-cold", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			codecs[O200k].pieces = pieceCache{}
			Count(O200k, text)
		}
	})
}
