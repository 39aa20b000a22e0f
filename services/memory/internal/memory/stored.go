package memory

import (
	"encoding/json"
	"math"
	"time"
	"unicode/utf8"
)

// asStored is t as a store that encoded it as JSON would decode it, when
// that can be told without the round trip, which was the costliest part
// of caching an append's turns: every string is valid UTF-8 (JSON would
// replace what is not), every time is in UTC (JSON keeps only an offset),
// and every metadata value is one JSON decodes to (nil, bool, float64,
// string, []any, map[string]any). Empty lists and maps become nil, as
// JSON leaves them out. ok is false for any other turn.
func asStored(t Turn) (Turn, bool) {
	if !utf8.ValidString(t.Content) || !utf8.ValidString(t.ToolName) || !utf8.ValidString(t.ModelProvider) ||
		!utf8.ValidString(t.ModelName) || !inUTC(t.Timestamp) {
		return Turn{}, false
	}
	for _, f := range t.Files {
		if !utf8.ValidString(f.Path) || !utf8.ValidString(f.SHA256) || !inUTC(f.Modified) {
			return Turn{}, false
		}
	}
	for _, img := range t.Images {
		if !utf8.ValidString(img) {
			return Turn{}, false
		}
	}
	for k := range t.Tokens {
		if !utf8.ValidString(k) {
			return Turn{}, false
		}
	}
	if !jsonShaped(t.ModelMetadata) || !jsonShaped(t.WorkflowState) {
		return Turn{}, false
	}
	if len(t.Files) == 0 {
		t.Files = nil
	}
	if len(t.Images) == 0 {
		t.Images = nil
	}
	if len(t.ModelMetadata) == 0 {
		t.ModelMetadata = nil
	}
	if len(t.WorkflowState) == 0 {
		t.WorkflowState = nil
	}
	if len(t.Tokens) == 0 {
		t.Tokens = nil
	}
	return t, true
}

// inUTC tells a time JSON carries as it is: in UTC (so with no monotonic
// reading; a zero time is, and JSON leaves it out and reads it back), its
// year from 0 to 9999.
func inUTC(t time.Time) bool { return t.Location() == time.UTC && t.Year() >= 0 && t.Year() <= 9999 }

// jsonShaped tells whether every value in m is one encoding/json decodes
// into an any, with valid UTF-8 strings.
func jsonShaped(m map[string]any) bool {
	for k, v := range m {
		if !utf8.ValidString(k) || !jsonValue(v) {
			return false
		}
	}
	return true
}

func jsonValue(v any) bool {
	switch v := v.(type) {
	case nil, bool:
		return true
	case float64:
		return !math.IsInf(v, 0) && !math.IsNaN(v) // JSON carries no other
	case string:
		return utf8.ValidString(v)
	case []any:
		if v == nil {
			return false // JSON would decode its null as a nil any
		}
		for _, e := range v {
			if !jsonValue(e) {
				return false
			}
		}
		return true
	case map[string]any:
		return v != nil && jsonShaped(v)
	}
	return false
}

// roundTrip is t encoded as JSON and decoded again, as a store reads it.
func roundTrip(t Turn) (Turn, bool) {
	b, err := json.Marshal(t)
	if err != nil {
		return Turn{}, false
	}
	var out Turn
	return out, json.Unmarshal(b, &out) == nil
}
