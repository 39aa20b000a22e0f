package fastcall

import (
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// flushes records how much of the body had been written at each flush.
type flushes struct {
	*httptest.ResponseRecorder
	at []int
}

func (f *flushes) Flush() { f.at = append(f.at, f.Body.Len()) }

// TestProgressGoesOutAtOnce: each notification is one event, flushed as
// soon as it is written (a buffered heartbeat would not reach the client
// before its timeout), encoded as the SDK encodes it (HTML unescaped);
// none goes out once the call has returned.
func TestProgressGoesOutAtOnce(t *testing.T) {
	t.Parallel()
	w := &flushes{ResponseRecorder: httptest.NewRecorder()}
	e := &eventStream{w: w}
	e.progress(&mcp.ProgressNotificationParams{ProgressToken: "t", Message: "<a> & é", Progress: 1})
	first := w.Body.Len()
	e.progress(&mcp.ProgressNotificationParams{ProgressToken: 7.0, Message: "next", Progress: 2})
	const want = "event: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress",` +
		`"params":{"progressToken":"t","message":"<a> & é","progress":1}}` + "\n\n" +
		"event: message\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress",` +
		`"params":{"progressToken":7,"message":"next","progress":2}}` + "\n\n"
	if diff := cmp.Diff(want, w.Body.String()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{first, w.Body.Len()}, w.at); diff != "" {
		t.Errorf("flushed with the body at (-want +got):\n%s", diff)
	}
	e.close()
	e.progress(&mcp.ProgressNotificationParams{ProgressToken: "t", Message: "late", Progress: 3})
	if w.Body.String() != want {
		t.Errorf("a notification went out after the call returned: %q", w.Body.String()[len(want):])
	}
}
