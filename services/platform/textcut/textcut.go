package textcut

import "unicode/utf8"

// Prefix is the longest start of s of at most n bytes that ends where a
// character starts: s itself when it fits.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
