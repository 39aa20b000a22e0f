package reply

import "unicode/utf8"

// JSONLen is the length of s as a reply's JSON writes it, without its
// quotes: escaped as json.Marshal escapes text, HTML's <, > and & too. An
// answer's budget counts these bytes, and a text of code escapes many.
func JSONLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c, size := jsonRuneLen(s[i:])
		n += c
		i += size
	}
	return n
}

// PrefixWithin is the longest start of s, ending where a character
// starts, whose JSONLen is at most n.
func PrefixWithin(s string, n int) string {
	used := 0
	for i := 0; i < len(s); {
		c, size := jsonRuneLen(s[i:])
		if used+c > n {
			return s[:i]
		}
		used += c
		i += size
	}
	return s
}

// jsonRuneLen is what the character s begins with takes in JSON, and its
// length in s.
func jsonRuneLen(s string) (cost, size int) {
	b := s[0]
	if b < utf8.RuneSelf {
		switch {
		case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t' || b == '\b' || b == '\f':
			return 2, 1
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			return 6, 1 // \u00XX
		}
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
		return 6, size // \ufffd, \u2028, \u2029
	}
	return size, size
}
