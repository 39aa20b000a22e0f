package call

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
)

// numberBounds are a numeric argument's limits, from its schema.
type numberBounds struct {
	integer  bool
	min, max *float64
}

// numericProperties collects the bounds of the schema's top-level numeric
// arguments, so a number out of range is refused in words the agent can
// act on: the validator's own ("maximum: 9223372036854775808/1 is greater
// than 1000.000000") spells a rational, and a value past float64 fails to
// decode at all.
func numericProperties(s *jsonschema.Schema) map[string]numberBounds {
	out := map[string]numberBounds{}
	for name, p := range s.Properties {
		if p == nil || (p.Type != "integer" && p.Type != "number") {
			continue
		}
		out[name] = numberBounds{integer: p.Type == "integer", min: p.Minimum, max: p.Maximum}
	}
	return out
}

// decodeObject reads raw as one JSON object, keeping numbers as sent
// (json.Number) until checkNumbers has looked at them.
func decodeObject(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the object")
	}
	if args == nil {
		return nil, errors.New("not an object")
	}
	return args, nil
}

// checkNumbers refuses a top-level number outside its bounds (or not
// whole, for an integer) and any number a float64 cannot hold, then turns
// every json.Number into the float64 the validator and structpb expect.
func (t *Tool) checkNumbers(args map[string]any) error {
	for name, v := range args {
		n, ok := v.(json.Number)
		if !ok {
			continue
		}
		b, bounded := t.numbers[name]
		if !bounded {
			continue
		}
		f, err := n.Float64()
		if err != nil || b.min != nil && f < *b.min || b.max != nil && f > *b.max || b.integer && math.Trunc(f) != f {
			return fmt.Errorf("%s must be %s; got %s", name, b.describe(), quoteNumber(n))
		}
	}
	for name, v := range args {
		converted, err := floats(v)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		args[name] = converted
	}
	return nil
}

// describe words the bounds: "a whole number from 1 to 1000".
func (b numberBounds) describe() string {
	kind := "a number"
	if b.integer {
		kind = "a whole number"
	}
	format := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch {
	case b.min != nil && b.max != nil:
		return fmt.Sprintf("%s from %s to %s", kind, format(*b.min), format(*b.max))
	case b.min != nil:
		return fmt.Sprintf("%s of at least %s", kind, format(*b.min))
	case b.max != nil:
		return fmt.Sprintf("%s of at most %s", kind, format(*b.max))
	}
	return kind
}

// floats replaces json.Number with float64 throughout v.
func floats(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("the number %s is out of range", quoteNumber(x))
		}
		return f, nil
	case map[string]any:
		for k, item := range x {
			c, err := floats(item)
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
	case []any:
		for i, item := range x {
			c, err := floats(item)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
	}
	return v, nil
}

// quoteNumber is a number as sent, cut short when a client sent thousands
// of digits.
func quoteNumber(n json.Number) string {
	const most = 40
	if s := n.String(); len(s) > most {
		return s[:most] + "..."
	}
	return n.String()
}
