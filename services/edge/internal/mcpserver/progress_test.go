package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProgressNeedsATokenMCPAllows: a call asking for progress with a
// string or an integer hears it; any other token (a fraction, an object,
// null, a string past the bound) gets none, on whichever path answers.
func TestProgressNeedsATokenMCPAllows(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		token any
		want  bool
	}{
		{"a string", "p1", true},
		{"an integer, as JSON decodes it", 7.0, true},
		{"the largest safe integer", 9007199254740991.0, true},
		// 2^53 + 1 decodes as 2^53: a token of 2^53 may be either.
		{"2^53", 9007199254740992.0, false},
		// Past 2^53 the token as decoded is not the one sent: its
		// notifications would name another, maybe another call's.
		{"a huge integer", 12345678901234567890.0, false},
		{"1e300", 1e300, false},
		{"a negative integer", -3.0, true},
		{"an int", 5, true},
		{"a string at the bound", strings.Repeat("x", maxProgressToken), true},
		{"a string past the bound", strings.Repeat("x", maxProgressToken+1), false},
		{"a fraction", 1.5, false},
		{"an object", map[string]any{"a": "b"}, false},
		{"an array", []any{1.0}, false},
		{"a boolean", true, false},
		{"null", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var sent []*mcp.ProgressNotificationParams
			ctx := WithProgressSink(context.Background(), func(p *mcp.ProgressNotificationParams) {
				sent = append(sent, p)
			})
			meta := mcp.Meta{}
			if c.token != nil || c.name == "null" {
				meta["progressToken"] = c.token
			}
			req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: meta, Name: "chat"}}
			report := progressReporter(ctx, req)
			if (report != nil) != c.want {
				t.Fatalf("reports progress: %v, want %v", report != nil, c.want)
			}
			if report == nil {
				return
			}
			report("using llama3.2")
			report("asking")
			want := []*mcp.ProgressNotificationParams{{ProgressToken: c.token, Message: "using llama3.2", Progress: 1},
				{ProgressToken: c.token, Message: "asking", Progress: 2}}
			if diff := cmp.Diff(want, sent); diff != "" {
				t.Errorf("notifications (-want +got):\n%s", diff)
			}
		})
	}
}
