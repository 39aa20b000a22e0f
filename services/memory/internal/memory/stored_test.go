package memory

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sameTime compares times as a reader of the turn sees them: the instant,
// the zone it is told in, and no monotonic reading.
var sameTime = cmp.Comparer(func(a, b time.Time) bool {
	return a.Equal(b) && a.Location().String() == b.Location().String() && a == a.Round(0) && b == b.Round(0)
})

// checkAsStored fails when asStored takes t and gives other than what a
// store's JSON round trip gives.
func checkAsStored(t *testing.T, turn Turn) (taken bool) {
	t.Helper()
	want, decoded := roundTrip(turn) // before asStored, which must leave turn as it is
	got, ok := asStored(turn)
	if !ok {
		return false
	}
	if !decoded {
		t.Fatalf("asStored took a turn JSON cannot carry: %#v", turn)
	}
	if diff := cmp.Diff(want, got, sameTime); diff != "" {
		t.Errorf("asStored differs from the store's round trip (-stored +asStored):\n%s", diff)
	}
	return true
}

// TestATurnIsCachedAsTheStoreReadsIt: the turns an append leaves in the
// cache equal what a read decodes from the store, without the round trip
// where that can be told, and through it where not.
func TestATurnIsCachedAsTheStoreReadsIt(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 15, 4, 5, 123456789, time.UTC)
	full := Turn{Role: RoleAssistant, Content: "<b>answer</b> & \u2028 more", Timestamp: at,
		Files:  []FileRef{{Path: "/p/a.go", SHA256: "aa", Size: 3, Modified: at}},
		Images: []string{"data:image/png;base64,AA=="}, ToolName: "chat", ModelProvider: "custom",
		ModelName: "llama3.2", ContextWindow: 128000, Tokens: map[string]int64{"o200k_base": 7},
		ModelMetadata: map[string]any{"trace_id": "abc", "n": 1.5, "ok": true, "none": nil,
			"list": []any{1.0, "x", map[string]any{}}, "empty": map[string]any{}},
		WorkflowState: map[string]any{"step": 2.0, "findings": []any{}},
	}
	for name, c := range map[string]struct {
		turn  Turn
		taken bool
	}{
		"every field": {full, true},
		"empty lists and maps": {Turn{Timestamp: at, Files: []FileRef{}, Images: []string{}, Tokens: map[string]int64{},
			ModelMetadata: map[string]any{}, WorkflowState: map[string]any{}}, true},
		"zero time":               {Turn{Content: "q"}, true},
		"monotonic reading":       {Turn{Timestamp: time.Now().UTC().Add(time.Second)}, true},
		"another zone":            {Turn{Timestamp: at.In(time.FixedZone("X", 3600))}, false},
		"local time":              {Turn{Timestamp: time.Now()}, time.Local == time.UTC},
		"invalid UTF-8":           {Turn{Timestamp: at, Content: "a\xffb"}, false},
		"invalid UTF-8 in a name": {Turn{Timestamp: at, ModelName: "m\xff"}, false},
		"invalid UTF-8 in a path": {Turn{Timestamp: at, Files: []FileRef{{Path: "/\xff"}}}, false},
		"invalid UTF-8 in a key":  {Turn{Timestamp: at, Tokens: map[string]int64{"\xff": 1}}, false},
		"an int in metadata":      {Turn{Timestamp: at, ModelMetadata: map[string]any{"n": 1}}, false},
		"a nil list in metadata":  {Turn{Timestamp: at, WorkflowState: map[string]any{"l": []any(nil)}}, false},
		"a file of another zone": {Turn{Timestamp: at, Files: []FileRef{{Path: "/a",
			Modified: at.In(time.FixedZone("Y", -7200))}}}, false},
	} {
		if taken := checkAsStored(t, c.turn); taken != c.taken {
			t.Errorf("%s: taken without the round trip %t, want %t", name, taken, c.taken)
		}
	}
}

// FuzzAsStored: whatever asStored takes, it gives as the round trip does.
func FuzzAsStored(f *testing.F) {
	f.Add("q", "chat", "k", "v", 1.5, int64(1764687845123456789), true, int64(0))
	f.Add("a\xffb", "", "\xfe", "", math.Inf(1), int64(0), false, int64(-1))
	f.Fuzz(func(t *testing.T, content, name, key, val string, num float64, nanos int64, utc bool, modified int64) {
		zone := time.UTC
		if !utc {
			zone = time.FixedZone("Z1", 5400)
		}
		mod := time.Time{}.In(zone)
		if modified != 0 {
			mod = time.Unix(0, modified).In(zone)
		}
		turn := Turn{Content: content, ToolName: name, ModelProvider: val, ModelName: key,
			Timestamp: time.Unix(0, nanos).In(zone), Images: []string{val},
			Files:         []FileRef{{Path: key, SHA256: val, Modified: mod}},
			Tokens:        map[string]int64{key: 1},
			ModelMetadata: map[string]any{key: val, "n": num, "list": []any{num, val, map[string]any{key: nil}}},
			WorkflowState: map[string]any{val: map[string]any{key: []any{}}},
		}
		checkAsStored(t, turn)
	})
}
