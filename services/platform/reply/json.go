package reply

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The reply's JSON is one flat object: the typed keys beside the tool's own
// (Fields), which never override them. Keys come sorted and text HTML
// escaped, as json.Marshal writes a map: the bytes a client reads do not
// depend on how the reply was built. The object is written in one pass,
// not built as a map and marshalled again, since every reply crosses the
// edge on the way to the client.

// MarshalJSON writes the reply as its client reads it.
func (r Reply) MarshalJSON() ([]byte, error) {
	w := newWriter()
	if err := w.reply(&r); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// MarshalJSON writes the metadata object.
func (m Metadata) MarshalJSON() ([]byte, error) {
	w := newWriter()
	if err := w.metadata(&m); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

// member is one key of an object and its value: a string, an int, a bool,
// *Metadata, or a value json.Marshal writes.
type member struct {
	key string
	val any
}

// writer writes a reply into buf.
type writer struct {
	buf bytes.Buffer
	enc *json.Encoder // writes a value into buf as json.Marshal would, with a newline
}

func newWriter() *writer {
	w := &writer{}
	w.enc = json.NewEncoder(&w.buf)
	return w
}

func (w *writer) reply(r *Reply) error {
	typed := make([]member, 0, 8+len(r.Fields))
	typed = append(typed, member{"status", r.Status})
	if r.ContentType != "" || r.Content != "" {
		typed = append(typed, member{"content", r.Content})
	}
	typed = put(typed, "content_type", r.ContentType)
	typed = put(typed, "error", r.Error)
	if r.StepNumber != nil {
		typed = append(typed, member{"step_number", *r.StepNumber})
	}
	typed = put(typed, "continuation_id", r.ContinuationID)
	if r.ContinuationOffer != nil {
		typed = append(typed, member{"continuation_offer", r.ContinuationOffer})
	}
	typed = append(typed, member{"metadata", &r.Metadata})
	return w.object(typed, r.Fields)
}

func (w *writer) metadata(m *Metadata) error {
	typed := make([]member, 0, 11+len(m.Fields))
	typed = put(typed, "tool_name", m.ToolName)
	typed = put(typed, "trace_id", m.TraceID)
	typed = put(typed, "continuation_error", m.ContinuationError)
	typed = put(typed, "generated_code_file", m.GeneratedCodeFile)
	typed = put(typed, "model_used", m.ModelUsed)
	typed = put(typed, "provider_used", m.ProviderUsed)
	typed = put(typed, "requested_model", m.RequestedModel)
	if m.OutputTruncated {
		typed = append(typed, member{"output_truncated", true}, member{"full_content_chars", m.FullContentChars})
	}
	if m.FilesOmitted != nil {
		typed = append(typed, member{"files_omitted", m.FilesOmitted})
	}
	if len(m.FilesSkipped) > 0 {
		typed = append(typed, member{"files_skipped", m.FilesSkipped})
	}
	return w.object(typed, m.Fields)
}

func put(members []member, key, value string) []member {
	if value != "" {
		members = append(members, member{key, value})
	}
	return members
}

// object writes the typed members and the tool's own fields whose keys the
// typed members leave free, sorted by key.
func (w *writer) object(members []member, fields map[string]any) error {
	typed := len(members)
	for k, v := range fields {
		if !slices.ContainsFunc(members[:typed], func(m member) bool { return m.key == k }) {
			members = append(members, member{k, v})
		}
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	w.buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		if err := w.key(m.key); err != nil {
			return err
		}
		if err := w.value(m.val); err != nil {
			return err
		}
	}
	w.buf.WriteByte('}')
	return nil
}

// key writes an object key and its colon; a key of plain letters, digits
// and underscores needs no escaping, which spares the encoder.
func (w *writer) key(k string) error {
	plain := k != ""
	for i := 0; i < len(k) && plain; i++ {
		c := k[i]
		plain = c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if plain {
		w.buf.WriteByte('"')
		w.buf.WriteString(k)
		w.buf.WriteByte('"')
	} else if err := w.value(k); err != nil {
		return err
	}
	w.buf.WriteByte(':')
	return nil
}

func (w *writer) value(v any) error {
	switch v := v.(type) {
	case *Metadata:
		if v != nil {
			return w.metadata(v)
		}
	case int:
		w.buf.Write(strconv.AppendInt(w.buf.AvailableBuffer(), int64(v), 10))
		return nil
	case bool:
		w.buf.WriteString(strconv.FormatBool(v))
		return nil
	}
	// The encoder writes nothing when it fails.
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	w.buf.Truncate(w.buf.Len() - 1) // the newline Encode ends a value with
	return nil
}

// Decoding reads the object once, into a map (json.Unmarshal into a map of
// raw values would check and copy each value, and decode it again), and
// moves the typed keys out of that map: what is left are the Fields.

// UnmarshalJSON reads a reply, the keys it does not type into Fields.
func (r *Reply) UnmarshalJSON(data []byte) error {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	return r.from(m)
}

// UnmarshalJSON reads the metadata object.
func (m *Metadata) UnmarshalJSON(data []byte) error {
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return err
	}
	return m.from(obj)
}

func (r *Reply) from(m map[string]any) error {
	*r = Reply{}
	err := errors.Join(text(m, "status", &r.Status), text(m, "content", &r.Content),
		text(m, "content_type", &r.ContentType), text(m, "error", &r.Error),
		typed(m, "step_number", &r.StepNumber), text(m, "continuation_id", &r.ContinuationID),
		typed(m, "continuation_offer", &r.ContinuationOffer))
	if err != nil {
		return err
	}
	if v, ok := m["metadata"]; ok {
		delete(m, "metadata")
		obj, ok := v.(map[string]any)
		if !ok && v != nil {
			return fmt.Errorf("json: metadata is %s, not an object", kind(v))
		}
		if err := r.Metadata.from(obj); err != nil {
			return err
		}
	}
	if len(m) > 0 {
		r.Fields = m
	}
	return nil
}

func (m *Metadata) from(obj map[string]any) error {
	*m = Metadata{}
	err := errors.Join(text(obj, "tool_name", &m.ToolName), text(obj, "trace_id", &m.TraceID),
		text(obj, "continuation_error", &m.ContinuationError), text(obj, "generated_code_file", &m.GeneratedCodeFile),
		typed(obj, "output_truncated", &m.OutputTruncated), typed(obj, "full_content_chars", &m.FullContentChars),
		typed(obj, "files_omitted", &m.FilesOmitted), typed(obj, "files_skipped", &m.FilesSkipped),
		text(obj, "model_used", &m.ModelUsed), text(obj, "provider_used", &m.ProviderUsed),
		text(obj, "requested_model", &m.RequestedModel))
	if err != nil {
		return err
	}
	if len(obj) > 0 {
		m.Fields = obj
	}
	return nil
}

// text moves the string under key out of m into dst; null leaves dst as it
// is, as json.Unmarshal does.
func text(m map[string]any, key string, dst *string) error {
	v, ok := m[key]
	if !ok {
		return nil
	}
	delete(m, key)
	switch v := v.(type) {
	case string:
		*dst = v
	case nil:
	default:
		return fmt.Errorf("json: %s is %s, not a string", key, kind(v))
	}
	return nil
}

// typed moves the value under key out of m into dst, by encoding it again:
// these keys are rare (the edge sets them) and small.
func typed(m map[string]any, key string, dst any) error {
	v, ok := m[key]
	if !ok {
		return nil
	}
	delete(m, key)
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("json: %s: %w", key, err)
	}
	return nil
}

// kind names a decoded JSON value's type for an error.
func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "a string"
}
