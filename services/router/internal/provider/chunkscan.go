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
// a value of another type, a number that is not a plain integer, and
// anything that is not JSON. FuzzScanChunk holds it to that. It checks
// the syntax as it reads: checking it first with json.Valid was a second
// pass over every event (docs/BENCHMARKS.md, the call path's twelfth step).
func scanChunk(payload []byte, chunk *streamChunk) bool {
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

// chunkScanner reads a payload, checking its syntax as it goes. A read
// that answers true has consumed one whole JSON value; bytes that cannot
// follow it (the l of nulll, the 1 of 01) are refused by the caller's next
// read, which expects a comma, a closing bracket or the end. A read
// answers false where the payload is not JSON, and where it leaves the
// payload to encoding/json.
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
	return s.peek() == 'n' && s.literal("null")
}

// literal consumes word, if that is what comes next.
func (s *chunkScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// object reads an object, calling member for each key, positioned at its
// value, which member must consume. A key with escapes is encoding/json's
// to match.
func (s *chunkScanner) object(member func(key []byte) bool) bool {
	return s.members(s.rawString, member)
}

// members reads an object, each key with key, and each value with member,
// which must consume it.
func (s *chunkScanner) members(key func() ([]byte, bool), member func(key []byte) bool) bool {
	return s.sequence('{', '}', func() bool {
		k, ok := key()
		if !ok || s.peek() != ':' {
			return false
		}
		s.i++
		return member(k)
	})
}

// sequence reads the elements of an array or the members of an object,
// from opening to closing, each with element, and the commas between them.
func (s *chunkScanner) sequence(opening, closing byte, element func() bool) bool {
	if s.peek() != opening {
		return false
	}
	s.i++
	if s.peek() == closing {
		s.i++
		return true
	}
	for {
		if !element() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case closing:
			s.i++
			return true
		default:
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
	ascii := true
	for end := start; end < len(s.b); end++ {
		switch c := s.b[end]; {
		case c == '"':
			raw := s.b[start:end]
			if !ascii && !utf8.Valid(raw) {
				return nil, false
			}
			s.i = end + 1
			return raw, true
		case c < ' ' || c == '\\':
			return nil, false // a control character is no JSON; an escape is encoding/json's to decode
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
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
	if !s.skipString() {
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
	if !s.integerPart() {
		return false
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
	chunk.Choices = chunk.Choices[:0]
	if chunk.Choices == nil {
		chunk.Choices = []streamChoice{} // as encoding/json leaves an empty array
	}
	return s.sequence('[', ']', func() bool {
		chunk.Choices = append(chunk.Choices, streamChoice{})
		return s.null() || s.choice(&chunk.Choices[len(chunk.Choices)-1])
	})
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

// maxDepth bounds the nesting skip follows, for two reasons: skip
// recurses once a level, so a provider's payload must not choose how deep
// the stack grows; and encoding/json refuses payloads nested deeper than
// 10,000, which a bound well under it (the levels above skip's value are
// at most four) never decodes. Deeper values are left to encoding/json.
const maxDepth = 512

// skip passes over one value.
func (s *chunkScanner) skip() bool { return s.skipNested(0) }

// skipNested is skip for a value depth levels below the one skip began.
func (s *chunkScanner) skipNested(depth int) bool {
	switch s.peek() {
	case '"':
		return s.skipString()
	case '{':
		return depth < maxDepth && s.members(s.anyKey, func([]byte) bool { return s.skipNested(depth + 1) })
	case '[':
		return depth < maxDepth && s.sequence('[', ']', func() bool { return s.skipNested(depth + 1) })
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.null()
	}
	return s.number()
}

// anyKey passes over a skipped object's key, escapes and all: rawString
// would leave an object with an escaped key to encoding/json, though a
// skipped object's keys are never read.
func (s *chunkScanner) anyKey() ([]byte, bool) { return nil, s.peek() == '"' && s.skipString() }

// skipString passes over the string whose opening quote is at s.i, which
// the caller has seen, checking it: no control character, and only JSON's
// escapes.
func (s *chunkScanner) skipString() bool {
	for s.i++; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c < ' ':
			return false
		case c == '\\':
			if s.i++; s.i == len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(s.b)-s.i < 5 || !isHex4(s.b[s.i+1:s.i+5]) {
					return false
				}
				s.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// number passes over a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *chunkScanner) number() bool {
	if !s.integerPart() {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		return s.digits()
	}
	return true
}

// integerPart passes over a number's sign and integer digits. A 0 ends
// them: the 1 of 01 is left for the caller's next read to refuse.
func (s *chunkScanner) integerPart() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
		return true
	}
	return s.digits()
}

// digits passes over one or more decimal digits.
func (s *chunkScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// isHex4 reports whether b is four hexadecimal digits (a \u escape's).
func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return len(b) == 4
}
