package textcut

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPrefixEndsWhereACharacterStarts(t *testing.T) {
	t.Parallel()
	got := map[string]string{
		"fits":            Prefix("héllo", 6),
		"ASCII":           Prefix("hello", 3),
		"within é":        Prefix("héllo", 2), // é is bytes 1 and 2
		"after é":         Prefix("héllo", 3),
		"nothing fits":    Prefix("日本", 2),
		"a bound of none": Prefix("abc", 0),
	}
	want := map[string]string{"fits": "héllo", "ASCII": "hel", "within é": "h", "after é": "hé",
		"nothing fits": "", "a bound of none": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prefixes (-want +got):\n%s", diff)
	}
}
