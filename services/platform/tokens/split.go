package tokens

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The tokenizer module finds the pieces an encoding's BPE works on with a
// backtracking regular expression, which costs a dozen allocations a piece
// and reads text at about 7 MB/s: a turn of a few kilobytes took longer to
// count than the rest of a call. pieces finds the same pieces by hand, one
// pass over the text, for o200k_base and cl100k_base. FuzzPiecesMatchTheRegexp
// holds it to the module's patterns, which read:
//
//	o200k_base: [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	  |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	  |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	cl100k_base: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
//	  |\s*[\r\n]+|\s+(?!\S)|\s+
//
// The module matches with code generated from these patterns (regexp2cg):
// it tries the alternatives in order at each position and takes the first
// that matches; its \s is unicode.IsSpace, and (?i) lets the long s (ſ)
// stand for s. Two faults of the generated code are kept, since the counts
// must be the module's: \s* before [\r\n]+ ends at the first line break,
// and U+007F is in no class but \S, so no piece holds it. A release of the
// module that fixes them changes its counts, and the tests say so.

// splitter names an encoding's pieces.
type splitter int

const (
	splitO200k splitter = iota
	splitCl100k
)

// pieces calls yield with each piece of text, in order; text must be
// valid UTF-8 (the module reads invalid bytes as U+FFFD, which pieces do
// not).
func (s splitter) pieces(text string, yield func(string)) {
	for p := 0; p < len(text); {
		if text[p] == del {
			p++
			continue
		}
		var end int
		if s == splitO200k {
			end = o200kPiece(text, p)
		} else {
			end = cl100kPiece(text, p)
		}
		if end <= p { // a piece of no bytes would loop: the fuzzer would see a rune counted alone
			_, n := runeAt(text, p)
			end = p + n
		}
		yield(text[p:end])
		p = end
	}
}

// isPrefix is [^\r\n\p{L}\p{N}], what may lead a word (U+007F aside).
func isPrefix(r rune) bool {
	return r != '\r' && r != '\n' && r != del && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

// isPunct is [^\s\p{L}\p{N}] (U+007F aside).
func isPunct(r rune) bool {
	return r != del && !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

// del (U+007F) is in no class of the generated matcher's but \S: no
// piece holds it.
const del = 0x7f

// isUpperish is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func isUpperish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

// isLowerish is [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func isLowerish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

func runeAt(text string, p int) (rune, int) {
	if p >= len(text) {
		return utf8.RuneError, 0
	}
	if c := text[p]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(text[p:])
}

// run is the end of the longest run of runes in class from p.
func run(text string, p int, class func(rune) bool) int {
	for p < len(text) {
		r, n := runeAt(text, p)
		if !class(r) {
			break
		}
		p += n
	}
	return p
}

func o200kPiece(text string, p int) int {
	// A word: [prefix]? upper* lower+ contraction?, else [prefix]? upper+
	// lower* contraction?; each tried with the rune that may lead it, then
	// without (a mark both leads and is part of words).
	c, n := runeAt(text, p)
	prefixed := isPrefix(c)
	for _, word := range [...]func(string, int) (int, bool){lowerWord, upperWord} {
		if prefixed {
			if end, ok := word(text, p+n); ok {
				return end
			}
		}
		if end, ok := word(text, p); ok {
			return end
		}
	}
	if unicode.IsNumber(c) {
		return numbers(text, p)
	}
	if end, ok := punct(text, p, "\r\n/"); ok {
		return end
	}
	return spaces(text, p)
}

// lowerWord matches upper* lower+ contraction? at p.
func lowerWord(text string, p int) (int, bool) {
	upperEnd := run(text, p, isUpperish)
	if r, _ := runeAt(text, upperEnd); upperEnd < len(text) && isLowerish(r) {
		return contraction(text, run(text, upperEnd, isLowerish)), true
	}
	// lower+ needs a rune: the upper run gives back its runes, last first,
	// until one of them is also lower (Lm, Lo, M), which lower+ takes.
	for q := upperEnd; q > p; {
		r, n := utf8.DecodeLastRuneInString(text[p:q])
		if isLowerish(r) {
			return contraction(text, q), true
		}
		q -= n
	}
	return 0, false
}

// upperWord matches upper+ lower* contraction? at p.
func upperWord(text string, p int) (int, bool) {
	end := run(text, p, isUpperish)
	if end == p {
		return 0, false
	}
	return contraction(text, run(text, end, isLowerish)), true
}

func cl100kPiece(text string, p int) int {
	c, n := runeAt(text, p)
	if c == '\'' {
		if end := contraction(text, p); end > p {
			return end
		}
	}
	if isPrefix(c) {
		if r, _ := runeAt(text, p+n); p+n < len(text) && unicode.IsLetter(r) {
			return run(text, p+n, unicode.IsLetter)
		}
	}
	if unicode.IsLetter(c) {
		return run(text, p, unicode.IsLetter)
	}
	if unicode.IsNumber(c) {
		return numbers(text, p)
	}
	if end, ok := punct(text, p, "\r\n"); ok {
		return end
	}
	return spaces(text, p)
}

// contraction is the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at p, or p.
func contraction(text string, p int) int {
	if p >= len(text) || text[p] != '\'' {
		return p
	}
	rest := text[p+1:]
	lower := func(i int) byte {
		if i >= len(rest) {
			return 0
		}
		return rest[i] | 0x20 // ASCII letters only: others never match below
	}
	switch a := lower(0); {
	case a == 's' || a == 't':
		return p + 2
	case len(rest) >= 2 && rest[0] == 0xC5 && rest[1] == 0xBF: // ſ, U+017F
		return p + 3
	case (a == 'r' || a == 'v') && lower(1) == 'e', a == 'l' && lower(1) == 'l':
		return p + 3
	case a == 'm' || a == 'd':
		return p + 2
	}
	return p
}

// numbers is \p{N}{1,3}.
func numbers(text string, p int) int {
	for range 3 {
		r, n := runeAt(text, p)
		if p >= len(text) || !unicode.IsNumber(r) {
			break
		}
		p += n
	}
	return p
}

// punct is " ?[^\s\p{L}\p{N}]+[trail]*", its parts taking all they can.
func punct(text string, p int, trail string) (int, bool) {
	if text[p] == ' ' {
		p++
	}
	end := run(text, p, isPunct)
	if end == p {
		return 0, false
	}
	for end < len(text) && strings.IndexByte(trail, text[end]) >= 0 {
		end++
	}
	return end, true
}

// spaces is \s*[\r\n]+|\s+(?!\S)|\s+ at p, where a rune of white space
// starts: through the first line breaks of the run (the module's generated
// matcher ends \s* at the first line break, not the last), else the run
// but its last rune when more text follows it, else the run. It reads no
// further than the first line break, so that blank lines of indentation
// cost what they hold, not the rest of the run each.
func spaces(text string, p int) int {
	end := p
	for end < len(text) {
		r, n := runeAt(text, end)
		if r == '\r' || r == '\n' {
			for end < len(text) && (text[end] == '\r' || text[end] == '\n') {
				end++
			}
			return end
		}
		if !unicode.IsSpace(r) {
			break
		}
		end += n
	}
	if end < len(text) {
		if _, n := utf8.DecodeLastRuneInString(text[p:end]); end-n > p {
			return end - n
		}
	}
	return end
}
