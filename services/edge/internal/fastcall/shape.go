package fastcall

import (
	"bytes"
	"encoding/json"
	"slices"
)

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
// has. Syntax is left to the caller (json.Valid): for a body that is not
// JSON the shape means nothing. It also gives the members of the envelope
// and of its params, each an object, as their values stand in the text,
// so that parse need not decode them again.
func plainShape(body []byte) (shape, bool) {
	s := shapeScanner{b: body}
	if !s.object(1, envelopeLevel) || s.deepest > maxDepth {
		return shape{}, false
	}
	return s.kept, true
}

// shape is what plainShape kept of a body.
type shape struct {
	// envelope and params are nil unless given as objects (not absent,
	// null or of another type).
	envelope, params members
}

// member is one member of an object, its value as it stands in the text.
type member struct {
	key   string
	value []byte
}

// members are an object's members, in order.
type members []member

// get is the value of the member named key, nil when there is none (a
// value given is never empty).
func (ms members) get(key string) json.RawMessage {
	for _, m := range ms {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

// only tells whether ms has no member besides keys.
func (ms members) only(keys ...string) bool {
	for _, m := range ms {
		if !slices.Contains(keys, m.key) {
			return false
		}
	}
	return true
}

// level names an object whose members plainShape checks.
type level int

const (
	envelopeLevel level = iota
	paramsLevel
	metaLevel
	noLevel // a value whose members are not checked
)

// inner is the level of the value of the member named key.
func (l level) inner(key []byte) level {
	switch {
	case l == envelopeLevel && string(key) == "params":
		return paramsLevel
	case l == paramsLevel && string(key) == "_meta":
		return metaLevel
	}
	return noLevel
}

// keep is where the scan keeps the members of an object at level l, nil
// when it keeps none.
func (s *shapeScanner) keep(l level) *members {
	switch l {
	case envelopeLevel:
		return &s.kept.envelope
	case paramsLevel:
		return &s.kept.params
	}
	return nil
}

// shapeScanner walks a JSON text, checking the members of the objects it
// is told to and the depth of everything.
type shapeScanner struct {
	b       []byte
	i       int
	deepest int
	kept    shape
}

func (s *shapeScanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// object checks the object at s.i, at depth, whose members lvl says how
// to check, and keeps them when it says so; anything but an object passes
// over unchecked.
func (s *shapeScanner) object(depth int, lvl level) bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.skip(depth - 1)
	}
	s.deepest = max(s.deepest, depth)
	s.i++
	var seen [][]byte
	keep := s.keep(lvl)
	if keep != nil {
		*keep = members{} // an object, even an empty one
	}
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
		s.ws()
		start := s.i
		if inner := lvl.inner(key); inner == noLevel {
			if !s.skip(depth) {
				return false
			}
		} else if !s.object(depth+1, inner) {
			return false
		}
		if keep != nil {
			// skip stops a number or a literal at the ',' or '}' after it,
			// whitespace and all, and may stop past the end of a text that
			// ends inside a string. Clipped: the value is the handler's,
			// and an append to it must not write over the body.
			raw := bytes.TrimRight(s.b[start:min(s.i, len(s.b))], " \t\r\n")
			*keep = append(*keep, member{string(key), slices.Clip(raw)})
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
