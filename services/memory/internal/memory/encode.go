package memory

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// EncodeTurn is t as the stores keep it (Encode).
func EncodeTurn(t Turn) ([]byte, error) { return encode(t, len(t.Content)+256) }

// Encode is v as the stores keep what memory holds as JSON (turns, initial
// contexts) and as memory weighs it: without encoding/json's escapes of <,
// > and &, which are for HTML pages and made a turn of code (or of '<'
// alone) take up to six times its size in the store and in every read of
// it. What was stored with them reads the same.
func Encode(v any) ([]byte, error) { return encode(v, 0) }

// encode is Encode into a buffer that starts at size bytes.
func encode(v any, size int) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(size)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// jsonTextLen is the length of s as a JSON string as EncodeTurn writes it:
// quoted; quotes, backslashes and \b \f \n \r \t escaped in two bytes;
// other control characters, U+2028, U+2029 and each byte that is not
// UTF-8 (as \ufffd) in six.
func jsonTextLen(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n++
			case c < 0x20:
				n += 5
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5
		case r == '\u2028' || r == '\u2029':
			n += 3
		}
		i += size
	}
	return n
}
