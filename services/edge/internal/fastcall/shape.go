package fastcall

import "bytes"

// maxDepth is how deeply the SDK lets a message nest (its internal/json
// checkMaxDepth): anything deeper it refuses, so it goes to the SDK.
const maxDepth = 1000

// maxMembers bounds the members of each object whose members are checked
// for repeats, which is quadratic in them: a call's envelope, params and
// _meta hold a handful. One with more goes to the SDK.
const maxMembers = 32

// plainShape tells whether body reads the same to encoding/json, which
// parse uses, as to the SDK's decoder: it nests no deeper than the SDK
// allows, and the envelope, its params and their _meta name each member
// once, without escapes. The SDK merges a member given twice into the
// one before (a second _meta adds to the first), where a map keeps only
// the last. What is not plain goes to the SDK, which answers as it always
// has. Syntax is left to encoding/json: for a body that is not JSON this
// may answer either way.
func plainShape(body []byte) bool {
	s := shapeScanner{b: body}
	return s.object(1, envelopeMembers) && s.deepest <= maxDepth
}

// members says, for a member of an object whose members are checked,
// which of its value's members are checked in turn (nil: none).
type members func(key []byte) members

func envelopeMembers(key []byte) members {
	if string(key) == "params" {
		return paramsMembers
	}
	return nil
}

func paramsMembers(key []byte) members {
	if string(key) == "_meta" {
		return metaMembers
	}
	return nil
}

func metaMembers([]byte) members { return nil }

// shapeScanner walks a JSON text, checking the members of the objects it
// is told to and the depth of everything.
type shapeScanner struct {
	b       []byte
	i       int
	deepest int
}

func (s *shapeScanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// object checks the object at s.i, at depth, whose members check says
// how to check; anything but an object passes over unchecked.
func (s *shapeScanner) object(depth int, check members) bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.skip(depth - 1)
	}
	s.deepest = max(s.deepest, depth)
	s.i++
	var seen [][]byte
	for {
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case '}':
			s.i++
			return true
		case ',':
			s.i++
			continue
		case '"':
		default:
			return false
		}
		key, ok := s.key()
		if !ok {
			return false
		}
		if len(seen) == maxMembers {
			return false
		}
		for _, k := range seen {
			if bytes.Equal(k, key) {
				return false
			}
		}
		seen = append(seen, key)
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		inner := check(key)
		if inner == nil {
			if !s.skip(depth) {
				return false
			}
		} else if !s.object(depth+1, inner) {
			return false
		}
	}
}

// key reads a member's name, which must hold no escape: both decoders
// unescape it, so two spellings could name one member.
func (s *shapeScanner) key() ([]byte, bool) {
	start := s.i + 1
	end := bytes.IndexByte(s.b[start:], '"')
	if end < 0 {
		return nil, false
	}
	key := s.b[start : start+end]
	if bytes.IndexByte(key, '\\') >= 0 {
		return nil, false
	}
	s.i = start + end + 1
	return key, true
}

// skip passes over one value inside an object or array at depth, noting
// how deep it nests.
func (s *shapeScanner) skip(depth int) bool {
	s.ws()
	open := 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
		case '{', '[':
			open++
			s.deepest = max(s.deepest, depth+open)
		case '}', ']':
			if open == 0 {
				return true // the end of the enclosing object
			}
			open--
		case ',':
			if open == 0 {
				return true
			}
		}
		s.i++
		if open == 0 && s.i < len(s.b) && (s.b[s.i-1] == '"' || s.b[s.i-1] == '}' || s.b[s.i-1] == ']') {
			return true
		}
	}
	return open == 0
}
