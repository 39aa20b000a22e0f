package tokens

import (
	"fmt"
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
		Count(O200k, "x") // the encoders are made on first use
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			forget(&codecs[O200k].pieces)
			Count(O200k, text)
		}
	})
}

// forget empties c, as a process that has counted nothing has it.
func forget(c *pieceCache) {
	for i := range c.slots {
		c.slots[i].Store(nil)
	}
}

// BenchmarkCountBlankLines counts blank lines of indentation, 8,000 and
// 64,000 of them: white space whose every run holds many line breaks.
// Each line costs the same at both sizes (an earlier version scanned the
// rest of the run for each line, as the module still does: quadratic).
//
//	go test -run '^$' -bench CountBlankLines ./services/platform/tokens
func BenchmarkCountBlankLines(b *testing.B) {
	for _, lines := range []int{8_000, 64_000} {
		text := strings.Repeat("\t \n", lines) + "x"
		b.Run(fmt.Sprint("lines=", lines), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Count(O200k, text)
			}
		})
	}
}
