package provider

import (
	"math/bits"
	"unicode/utf8"
)

// appendQuoted appends s to dst as encoding/json writes a string with its
// default HTML escaping (json.Marshal, go-openai's encoder): quoted, with
// ", \ and control bytes escaped, <, > and & as \u003c, \u003e and \u0026,
// U+2028 and U+2029 as \u2028 and \u2029, and each byte of invalid UTF-8
// as \ufffd. FuzzAppendQuoted holds it to encoding/json. It tests eight
// bytes at a time, since a request's text is mostly bytes that need no
// escape, and writes into the body itself: a request holds a thread's
// history, a hundred kilobytes and more at an agent's sizes.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			m := notPlain(load8(s, i))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8 // to the first byte that is not plain
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if plainByte[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// plainByte marks the ASCII bytes written as they are.
var plainByte = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()

// load8 reads the eight bytes of s from i, the first lowest.
func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// notPlain marks, in the top bit of each of w's eight bytes, those that
// are not plain ASCII: at 0x80 or above, below 0x20, or one of " \ < > &.
// The lowest mark is the first byte that is not plain: the bytes before it
// are at least 0x20 and none of the five, so none starts a borrow in the
// subtractions (x - k·ones marks a byte below k, or one a borrow reaches)
// and none is marked, and bytes at 0x80 or above are marked by w itself.
// Marks above the lowest may be borrows' and are not used.
func notPlain(w uint64) uint64 {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	below := func(x, k uint64) uint64 { return (x - k*ones) &^ x }
	return (w | below(w, 0x20) | below(w^'"'*ones, 1) | below(w^'\\'*ones, 1) | below(w^'<'*ones, 1) |
		below(w^'>'*ones, 1) | below(w^'&'*ones, 1)) & tops
}
