package secrets

import (
	"cmp"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Redacted replaces a secret value.
const Redacted = "[redacted]"

// MinLength is the shortest value scrubbed: shorter ones (test keys, a
// Redis password like "zen") are ordinary words, and replacing them would
// garble text without protecting anything worth a token.
const MinLength = 8

// Scrubber replaces secret values in text. A nil Scrubber, or one without
// values, leaves text as it is, so code that may run without secrets
// configured (tests, a role with none) needs no special case.
type Scrubber struct {
	values   []string
	replacer *strings.Replacer
}

// New returns a scrubber for values; values shorter than MinLength are
// ignored.
func New(values ...string) *Scrubber {
	s := &Scrubber{}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) >= MinLength && !slices.Contains(s.values, v) {
			s.values = append(s.values, v)
		}
	}
	// strings.Replacer tries the old strings in argument order at each
	// position, so the longest goes first: a secret that contains another
	// is replaced whole rather than leaving its tail behind.
	slices.SortFunc(s.values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(s.values))
	for _, v := range s.values {
		pairs = append(pairs, v, Redacted)
	}
	if len(pairs) > 0 {
		s.replacer = strings.NewReplacer(pairs...)
	}
	return s
}

// Empty reports whether there is nothing to scrub.
func (s *Scrubber) Empty() bool { return s == nil || s.replacer == nil }

// Values lists the secret values, sorted (for tests and diagnostics that
// count them; never log them).
func (s *Scrubber) Values() []string {
	if s == nil {
		return nil
	}
	return slices.Sorted(slices.Values(s.values))
}

// String returns text with every secret value replaced by Redacted.
func (s *Scrubber) String(text string) string {
	if s.Empty() || text == "" {
		return text
	}
	return s.replacer.Replace(text)
}

// Value scrubs a decoded JSON value (maps, slices, strings) and returns
// it; maps and slices are changed in place.
func (s *Scrubber) Value(v any) any {
	if s.Empty() {
		return v
	}
	switch v := v.(type) {
	case string:
		return s.String(v)
	case map[string]any:
		for k, x := range v {
			v[k] = s.Value(x)
		}
	case []any:
		for i, x := range v {
			v[i] = s.Value(x)
		}
	}
	return v
}

// Message scrubs every string field of m and of the messages it holds, in
// place: a tool result's payload, its thread turns and its generated code
// alike, including fields added later.
func (s *Scrubber) Message(m proto.Message) {
	if s.Empty() || m == nil {
		return
	}
	s.message(m.ProtoReflect())
}

func (s *Scrubber) message(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			s.list(fd, v.List())
		case fd.IsMap():
			s.mapValues(fd.MapValue(), v.Map())
		case fd.Kind() == protoreflect.StringKind:
			if clean := s.String(v.String()); clean != v.String() {
				m.Set(fd, protoreflect.ValueOfString(clean))
			}
		case isMessage(fd):
			s.message(v.Message())
		}
		return true
	})
}

func (s *Scrubber) list(fd protoreflect.FieldDescriptor, l protoreflect.List) {
	for i := range l.Len() {
		switch {
		case fd.Kind() == protoreflect.StringKind:
			l.Set(i, protoreflect.ValueOfString(s.String(l.Get(i).String())))
		case isMessage(fd):
			s.message(l.Get(i).Message())
		}
	}
}

func (s *Scrubber) mapValues(fd protoreflect.FieldDescriptor, m protoreflect.Map) {
	m.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		switch {
		case fd.Kind() == protoreflect.StringKind:
			m.Set(k, protoreflect.ValueOfString(s.String(v.String())))
		case isMessage(fd):
			s.message(v.Message())
		}
		return true
	})
}

func isMessage(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind
}
