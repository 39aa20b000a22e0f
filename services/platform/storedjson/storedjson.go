package storedjson

import (
	"encoding/json"
	"fmt"
)

// MaxValues bounds how many values (each map, list, string, number...) a
// value stored as JSON holds. Within its bytes, a list of empty maps holds
// one every three, and each costs a reader far more than three bytes: a
// map as memory, the edge and the gateway decode it. Zen's tools keep
// hundreds.
const MaxValues = 20_000

// MaxNesting bounds how deep a value stored as JSON nests. SQLite's JSON
// reads stop at a thousand levels, so a thread holding one nested that
// deep could never be read; and each level costs a reader rendering it.
// Zen's tools nest a few levels.
const MaxNesting = 64

// MaxContextBytes bounds a thread's initial context as JSON (Size).
const MaxContextBytes = 2 << 20

// MaxTurnBytes bounds a turn's text: the edge keeps the start of an answer
// longer than that, saying so, as memory refuses a longer turn.
const MaxTurnBytes = 2 << 20

// MaxWorkflowStateBytes bounds what a workflow tool's step keeps for its
// next step, as JSON (Size). A workflow's state carries the findings of
// every step before it, so without a bound a thread's steps grew with the
// square of their number.
const MaxWorkflowStateBytes = 1 << 20

// Shape counts the values v holds, itself included, and reports whether
// it stays within MaxNesting levels of maps and lists and MaxValues values.
// Past them it stops counting.
func Shape(v any) (values int, ok bool) {
	left := MaxValues
	ok = !pastShape(v, MaxNesting, &left)
	return MaxValues - left, ok
}

// pastShape reports whether v nests deeper than levels maps and lists,
// or holds more values than *values allows, which it counts down.
func pastShape(v any, levels int, values *int) bool {
	if *values--; *values < 0 {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		if levels == 0 {
			return true
		}
		for _, e := range v {
			if pastShape(e, levels-1, values) {
				return true
			}
		}
	case []any:
		if levels == 0 {
			return true
		}
		for _, e := range v {
			if pastShape(e, levels-1, values) {
				return true
			}
		}
	}
	return false
}

// Size is the length of v's JSON as memory stores it: without
// encoding/json's escapes of <, > and &.
func Size(v any) (int, error) {
	var n counter
	enc := json.NewEncoder(&n)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return 0, err
	}
	return int(n) - 1, nil // the encoder's newline
}

// counter counts the bytes written to it.
type counter int

func (c *counter) Write(b []byte) (int, error) {
	*c += counter(len(b))
	return len(b), nil
}

// FitsAThread says why arguments, a call's, could not be kept as a new
// thread's initial context, or "" when they could.
func FitsAThread(args map[string]any) string {
	_, _, why := Measure(args, MaxContextBytes)
	return why
}

// FitsAWorkflowState says why a workflow's state could not be kept for its
// next step, or "" when it could.
func FitsAWorkflowState(state map[string]any) string {
	_, _, why := Measure(state, MaxWorkflowStateBytes)
	return why
}

// Measure counts the values v holds and its bytes as JSON (Size), and says
// why it is past the shape values are kept in or past limit bytes, or "":
// the one rule memory and the roles before it apply.
func Measure(v map[string]any, limit int) (values, bytes int, why string) {
	values, ok := Shape(v)
	if !ok {
		return values, 0, fmt.Sprintf("nested deeper than %d levels or with more than %d values", MaxNesting, MaxValues)
	}
	bytes, err := Size(v)
	if err != nil {
		return values, 0, "not JSON: " + err.Error()
	}
	if bytes > limit {
		return values, bytes, fmt.Sprintf("%d bytes as JSON, over the %d-byte limit", bytes, limit)
	}
	return values, bytes, ""
}
