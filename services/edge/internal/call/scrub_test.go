package call

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/secrets"
)

func TestScrubbedOutcome(t *testing.T) {
	t.Parallel()
	s := secrets.New("tok-0123456789abcdef")
	for _, c := range []struct {
		name    string
		in, out Outcome
	}{
		{"reply",
			Outcome{Reply: reply.Error("chat", "tok-0123456789abcdef").With(map[string]any{"n": 1.0})},
			Outcome{Reply: reply.Error("chat", "[redacted]").With(map[string]any{"n": 1.0})}},
		{"clean", Outcome{Reply: reply.Error("chat", "fine")}, Outcome{Reply: reply.Error("chat", "fine")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(c.out, scrubbed(s, c.in), cmp.AllowUnexported(Outcome{})); diff != "" {
				t.Errorf("scrubbed (-want +got):\n%s", diff)
			}
		})
	}
	var got []string
	scrubProgress(s, func(m string) { got = append(got, m) })("at tok-0123456789abcdef")
	if diff := cmp.Diff([]string{"at [redacted]"}, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}
