package tokens

import (
	"flag"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/tiktoken-go/tokenizer"
)

// splitPatterns are the tokenizer module's own expressions (codec
// package), which pieces stands in for. They must be the module's byte for
// byte: regexp2 runs the code generated for a pattern only when it is the
// very string registered, and interprets any other, without the faults
// pieces copies (TestPatternsRunTheModulesMatcher).
var splitPatterns = map[splitter]string{
	splitO200k: `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` +
		`(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	splitCl100k: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*` +
		`|\s*[\r\n]+|\s+(?!\S)|\s+`,
}

var splitEncodings = map[splitter]string{splitO200k: O200k, splitCl100k: Cl100k}

var compiled sync.Map // pattern → *regexp2.Regexp

func regexpPieces(t testing.TB, pattern, text string) []string {
	t.Helper()
	re, ok := compiled.Load(pattern)
	if !ok {
		re, _ = compiled.LoadOrStore(pattern, regexp2.MustCompile(pattern, regexp2.None))
	}
	return matches(t, re.(*regexp2.Regexp), text)
}

func matches(t testing.TB, re *regexp2.Regexp, text string) []string {
	t.Helper()
	var out []string
	m, err := re.FindStringMatch(text)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ourPieces(s splitter, text string) []string {
	var out []string
	s.pieces(text, func(p string) { out = append(out, p) })
	return out
}

// libraryCount is the tokenizer module's own count, which Count must
// equal.
func libraryCount(t testing.TB, encoding, text string) int64 {
	t.Helper()
	c, err := tokenizer.Get(tokenizer.Encoding(encoding))
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Count(text)
	if err != nil {
		t.Fatal(err)
	}
	return int64(n)
}

// trickySplits are texts where the expressions backtrack or look ahead:
// words led by marks, upper runs that end in letters of both cases,
// contractions in every case (and ſ), runs of digits, white space before
// words, line breaks and the end.
var trickySplits = []string{
	"", "a", " ", "  ", "a  b", "a \n b", "x\n  \n y", "\r\n\r\n", "  \r\n", "\t\tfoo", "foo  ", "foo\u3000\u3000bar",
	"don't", "DON'T", "they're", "we've", "I'm", "you'll", "he'd", "it'ſ", "'s", "''s", "a'", "x'LL", "x'Re",
	"\u0301A", "\u0301a", "\u0301", "A\u0301", "中A", "中", "ǅA", "ʰA", "ǅǅb", "ABCdef", "HTTPServer",
	"ÉCOLE", "x\x7fy", " \x7f", "a\x7f\x7fb", "x  \x7f",
	"12345", "1 234 5678", "٣٤٥٦", "Ⅻ12", "x=1/2;", " ///\n", "<<=>>", " !\r\n/", "a/b", "café", "naïve",
	"κόσμε", "Привет, мир!", "こんにちは世界", "🙂🙂 ok", "a\u200db", "\u00a0x", "x\u0085y", "tab\there",
	"line1\nline2\n\n\nline3", "  leading", "trailing   ", "mixed \t \n \t end", " \n \n \n x", "\t\n\t\n\tx",
	"\r\n \r\n  ",
}

func splitSamples(t testing.TB) []string {
	samples := append([]string{}, trickySplits...)
	samples = append(samples, prose(t)...)
	code := corpus(t, ".go")
	return append(samples, code[:min(40, len(code))]...)
}

// TestPatternsRunTheModulesMatcher: the patterns above reach the module's
// generated matcher, which alone puts U+007F in no piece and ends \s* at
// the first line break; the interpreter would split these otherwise.
func TestPatternsRunTheModulesMatcher(t *testing.T) {
	t.Parallel()
	for s, pattern := range splitPatterns {
		if got := regexpPieces(t, pattern, "x\x7fy"); !cmp.Equal(got, []string{"x", "y"}) {
			t.Errorf("%s: %q, want the generated matcher's [x y]", splitEncodings[s], got)
		}
		if got := regexpPieces(t, pattern, " \n \n"); !cmp.Equal(got, []string{" \n", " \n"}) {
			t.Errorf("%s: %q, want the generated matcher's [\" \\n\" \" \\n\"]", splitEncodings[s], got)
		}
	}
}

// TestPiecesMatchTheRegexp: on tricky texts, the project's prose and Go
// code, pieces are the module's expression's matches, and Count is the
// module's count.
func TestPiecesMatchTheRegexp(t *testing.T) {
	t.Parallel()
	for s, pattern := range splitPatterns {
		for _, text := range splitSamples(t) {
			if diff := cmp.Diff(regexpPieces(t, pattern, text), ourPieces(s, text)); diff != "" {
				t.Fatalf("%s, %.60q: pieces (-regexp +ours):\n%s", splitEncodings[s], text, diff)
			}
			if got, want := Count(splitEncodings[s], text), libraryCount(t, splitEncodings[s], text); got != want {
				t.Fatalf("%s, %.60q: %d tokens, the module counts %d", splitEncodings[s], text, got, want)
			}
		}
	}
}

var allRunes = flag.Bool("allrunes", false, "TestRunesSplitAsTheRegexp: every rune to U+2FFFF, not a sample "+
	"(12 s without the race detector)")

// TestRunesSplitAsTheRegexp puts runes in the contexts the patterns tell
// apart: alone, inside a word, after a space, before a contraction,
// doubled before a line break. Every rune below U+0800, and a sample of
// the others; -allrunes takes them all.
func TestRunesSplitAsTheRegexp(t *testing.T) {
	t.Parallel()
	for s, pattern := range splitPatterns {
		for r := rune(0); r <= 0x2ffff; r++ {
			if !utf8.ValidRune(r) || r >= 0x800 && r%37 != 0 && !*allRunes {
				continue
			}
			c := string(r)
			for _, text := range []string{c, "a" + c + "b", " " + c, "A" + c + "'S", c + c + "\n x"} {
				if diff := cmp.Diff(regexpPieces(t, pattern, text), ourPieces(s, text)); diff != "" {
					t.Fatalf("%s, %q: pieces (-regexp +ours):\n%s", splitEncodings[s], text, diff)
				}
			}
		}
	}
}

func FuzzPiecesMatchTheRegexp(f *testing.F) {
	for _, s := range trickySplits {
		f.Add(s)
	}
	f.Add(strings.Repeat("Ab'S 12\u0301 ", 5))
	f.Add("a\xffb \xc3")
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			// Counted by the module itself: the same by construction, but
			// held to it all the same.
			for _, enc := range splitEncodings {
				if got, want := Count(enc, text), libraryCount(t, enc, text); got != want {
					t.Fatalf("%s, %q: %d tokens, the module counts %d", enc, text, got, want)
				}
			}
			return
		}
		for s, pattern := range splitPatterns {
			if diff := cmp.Diff(regexpPieces(t, pattern, text), ourPieces(s, text)); diff != "" {
				t.Fatalf("%s, %q: pieces (-regexp +ours):\n%s", splitEncodings[s], text, diff)
			}
			if got, want := Count(splitEncodings[s], text), libraryCount(t, splitEncodings[s], text); got != want {
				t.Fatalf("%s, %q: %d tokens, the module counts %d", splitEncodings[s], text, got, want)
			}
		}
	})
}
