package provider

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// scanChunk decodes the chunks providers send, {"choices":[{"delta":
// {"content":"..."},"finish_reason":null}],...}, into chunk without
// encoding/json's reflection, a sizeable share of the router's CPU under
// load (docs/BENCHMARKS.md, Router). chunk must be as decodeChunk leaves it
// before a decode: no usage, and choices of zero length whose array (if
// any) holds zero values; the array is reused. scanChunk answers only
// where encoding/json would decode the payload, without error, to the same
// chunk, and reports false for anything else, leaving chunk for
// json.Unmarshal to decode again: a key spelled in another case (which
// encoding/json matches), choices or usage given twice (which it merges),
// a value of another type, a number that is not a plain integer.
// FuzzScanChunk holds it to that.
func scanChunk(payload []byte, chunk *streamChunk) bool {
	if !json.Valid(payload) {
		return false
	}
	s := chunkScanner{b: payload}
	var seen [2]bool
	ok := s.object(func(key []byte) bool {
		switch {
		case string(key) == "choices":
			return once(&seen[0]) && s.choices(chunk)
		case string(key) == "usage":
			return once(&seen[1]) && s.usage(chunk)
		case bytes.EqualFold(key, []byte("choices")), bytes.EqualFold(key, []byte("usage")):
			return false
		}
		return s.skip()
	})
	return ok && s.ws() == len(s.b)
}

// once reports whether a key is met for the first time.
func once(seen *bool) bool {
	first := !*seen
	*seen = true
	return first
}

// chunkScanner reads a payload json.Valid accepted, so it only checks
// shapes, not syntax.
type chunkScanner struct {
	b []byte
	i int
}

// ws skips white space and returns the position of what follows.
func (s *chunkScanner) ws() int {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
	return s.i
}

// peek is the next byte after white space.
func (s *chunkScanner) peek() byte {
	if s.ws() == len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// null consumes a null, if that is what comes next.
func (s *chunkScanner) null() bool {
	if s.peek() != 'n' {
		return false
	}
	s.i += len("null")
	return true
}

// object reads an object, calling member for each key, positioned at its
// value, which member must consume.
func (s *chunkScanner) object(member func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	for {
		switch s.peek() {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
			continue
		}
		key, ok := s.rawString()
		if !ok {
			return false // a key with escapes: encoding/json's to match
		}
		s.ws()
		s.i++ // the colon
		if !member(key) {
			return false
		}
	}
}

// rawString reads a string that holds no escape and nothing that decoding
// would change, and returns its bytes.
func (s *chunkScanner) rawString() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	end := bytes.IndexByte(s.b[start:], '"')
	if end < 0 {
		return nil, false
	}
	raw := s.b[start : start+end]
	if bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
		return nil, false
	}
	s.i = start + end + 1
	return raw, true
}

// str reads a string or null into dst, as encoding/json does: null leaves
// dst as it is.
func (s *chunkScanner) str(dst *string) bool {
	if s.null() {
		return true
	}
	if s.peek() != '"' {
		return false
	}
	if raw, ok := s.rawString(); ok {
		*dst = string(raw)
		return true
	}
	start := s.i
	if !s.skip() {
		return false
	}
	return json.Unmarshal(s.b[start:s.i], dst) == nil // escapes, or bytes that are not UTF-8
}

// integer reads a plain integer or null into dst.
func (s *chunkScanner) integer(dst *int) bool {
	if s.null() {
		return true
	}
	start := s.i
	for s.i < len(s.b) && (s.b[s.i] == '-' || '0' <= s.b[s.i] && s.b[s.i] <= '9') {
		s.i++
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return false // encoding/json refuses it for an int
	}
	n, err := strconv.Atoi(string(s.b[start:s.i]))
	if err != nil {
		return false
	}
	*dst = n
	return true
}

// choices reads the choices array into chunk, reusing its elements.
func (s *chunkScanner) choices(chunk *streamChunk) bool {
	if s.null() {
		chunk.Choices = nil
		return true
	}
	if s.peek() != '[' {
		return false
	}
	s.i++
	chunk.Choices = chunk.Choices[:0]
	if chunk.Choices == nil {
		chunk.Choices = []streamChoice{} // as encoding/json leaves an empty array
	}
	for {
		switch s.peek() {
		case ']':
			s.i++
			return true
		case ',':
			s.i++
			continue
		}
		chunk.Choices = append(chunk.Choices, streamChoice{})
		if !s.null() && !s.choice(&chunk.Choices[len(chunk.Choices)-1]) {
			return false
		}
	}
}

func (s *chunkScanner) choice(c *streamChoice) bool {
	// A string given twice is the last one to encoding/json, and a null
	// changes nothing: so here too.
	return s.object(func(key []byte) bool {
		switch {
		case string(key) == "delta":
			return s.null() || s.object(func(key []byte) bool {
				switch {
				case string(key) == "content":
					return s.str(&c.Delta.Content)
				case bytes.EqualFold(key, []byte("content")):
					return false
				}
				return s.skip()
			})
		case string(key) == "finish_reason":
			return s.str(&c.FinishReason)
		case bytes.EqualFold(key, []byte("delta")), bytes.EqualFold(key, []byte("finish_reason")):
			return false
		}
		return s.skip()
	})
}

func (s *chunkScanner) usage(chunk *streamChunk) bool {
	if s.null() {
		chunk.Usage = nil
		return true
	}
	u := &streamUsage{}
	ok := s.object(func(key []byte) bool {
		switch {
		case string(key) == "prompt_tokens":
			return s.integer(&u.PromptTokens)
		case string(key) == "completion_tokens":
			return s.integer(&u.CompletionTokens)
		case bytes.EqualFold(key, []byte("prompt_tokens")), bytes.EqualFold(key, []byte("completion_tokens")):
			return false
		}
		return s.skip()
	})
	chunk.Usage = u
	return ok
}

// skip passes over one value.
func (s *chunkScanner) skip() bool {
	switch s.peek() {
	case '"':
		s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default: // true, false, null or a number
		for s.i < len(s.b) && isScalarByte(s.b[s.i]) {
			s.i++
		}
	}
	return true
}

// skipString passes over the string that starts at s.i.
func (s *chunkScanner) skipString() {
	for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
		if s.b[s.i] == '\\' {
			s.i++
		}
	}
	s.i++
}

// isScalarByte tells whether b may be part of a literal or a number.
func isScalarByte(b byte) bool {
	return b == '-' || b == '+' || b == '.' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
