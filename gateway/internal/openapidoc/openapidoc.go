package openapidoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
)

// member is one name and value of a JSON object.
type member struct {
	name  string
	value json.RawMessage
}

// object is a JSON object with its members in their order.
type object []member

func parseObject(b []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var o object
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("member %v: %w", tok, err)
		}
		o = append(o, member{tok.(string), v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return o, nil
}

func (o object) get(name string) (json.RawMessage, bool) {
	for _, m := range o {
		if m.name == name {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces name's value, or adds name at the end.
func (o *object) set(name string, value json.RawMessage) {
	for i, m := range *o {
		if m.name == name {
			(*o)[i].value = value
			return
		}
	}
	*o = append(*o, member{name, value})
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(m.name)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Doc is an OpenAPI 2.0 document.
type Doc struct{ top object }

// Parse reads a document.
func Parse(b []byte) (*Doc, error) {
	top, err := parseObject(b)
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	d := &Doc{top}
	if v, _ := d.top.get("swagger"); string(v) != `"2.0"` {
		return nil, errors.New(`openapi document: not OpenAPI 2.0 (no "swagger": "2.0")`)
	}
	return d, nil
}

// SetVersion sets info.version.
func (d *Doc) SetVersion(version string) error {
	raw, _ := d.top.get("info")
	info, err := parseObject(raw)
	if err != nil {
		return fmt.Errorf("openapi document: info: %w", err)
	}
	v, err := json.Marshal(version)
	if err != nil {
		return err
	}
	info.set("version", v)
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	d.top.set("info", b)
	return nil
}

// Merge adds the paths, definitions and tags of fragment, a JSON object
// with nothing else. A path or definition the document already has is an
// error: each route has one description, wherever it comes from. Paths and
// definitions end up sorted by name, as the generator sorts its own.
func (d *Doc) Merge(fragment []byte) error {
	frag, err := parseObject(fragment)
	if err != nil {
		return fmt.Errorf("routes: %w", err)
	}
	for _, m := range frag {
		switch m.name {
		case "paths", "definitions":
			if err := d.mergeMap(m.name, m.value); err != nil {
				return err
			}
		case "tags":
			if err := d.mergeTags(m.value); err != nil {
				return err
			}
		default:
			return fmt.Errorf("routes: %q: only paths, definitions and tags are merged; the rest of the "+
				"document comes from the options in proto/zen/gateway/v1/gateway.proto", m.name)
		}
	}
	return d.checkRefs()
}

func (d *Doc) mergeMap(name string, add json.RawMessage) error {
	into := map[string]json.RawMessage{}
	if have, ok := d.top.get(name); ok {
		if err := json.Unmarshal(have, &into); err != nil {
			return fmt.Errorf("openapi document: %s: %w", name, err)
		}
	}
	var extra map[string]json.RawMessage
	if err := json.Unmarshal(add, &extra); err != nil {
		return fmt.Errorf("routes: %s: %w", name, err)
	}
	for k, v := range extra {
		if _, dup := into[k]; dup {
			return fmt.Errorf("routes: %s %q is also generated from the protos: describe it in one place", name, k)
		}
		into[k] = v
	}
	b, err := json.Marshal(into) // a map's names come out sorted
	if err != nil {
		return err
	}
	d.top.set(name, b)
	return nil
}

type tag struct {
	Name string `json:"name"`
}

func (d *Doc) mergeTags(add json.RawMessage) error {
	var have, extra []json.RawMessage
	if raw, ok := d.top.get("tags"); ok {
		if err := json.Unmarshal(raw, &have); err != nil {
			return fmt.Errorf("openapi document: tags: %w", err)
		}
	}
	if err := json.Unmarshal(add, &extra); err != nil {
		return fmt.Errorf("routes: tags: %w", err)
	}
	var names []string
	for _, raw := range slices.Concat(have, extra) {
		var t tag
		if err := json.Unmarshal(raw, &t); err != nil || t.Name == "" {
			return fmt.Errorf("a tag without a name: %s", raw)
		}
		if slices.Contains(names, t.Name) {
			return fmt.Errorf("routes: tag %q is also generated from the protos", t.Name)
		}
		names = append(names, t.Name)
	}
	b, err := json.Marshal(slices.Concat(have, extra))
	if err != nil {
		return err
	}
	d.top.set("tags", b)
	return nil
}

var ref = regexp.MustCompile(`"\$ref":\s*"#/definitions/([^"]+)"`)

// checkRefs makes sure every schema reference names a definition.
func (d *Doc) checkRefs() error {
	raw, _ := d.top.get("definitions")
	var defs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &defs); err != nil {
		return fmt.Errorf("openapi document: definitions: %w", err)
	}
	b, err := json.Marshal(d.top)
	if err != nil {
		return err
	}
	for _, m := range ref.FindAllSubmatch(b, -1) {
		if _, ok := defs[string(m[1])]; !ok {
			return fmt.Errorf("openapi document: #/definitions/%s is referenced but not defined", m[1])
		}
	}
	return nil
}

// Encode writes the document as protoc-gen-openapiv2 writes one: two
// spaces of indent, HTML characters escaped, a final newline.
func (d *Doc) Encode() ([]byte, error) {
	compact, err := json.Marshal(d.top) // compacts and escapes every member
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
