package streamhttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLimitBodyRefusesBeforeReadingWhole: a body over the limit is refused
// whether or not it declares its length, having read no more than the
// limit (none of it past the head, when the length says so up front); a
// body within it reaches the handler whole.
func TestLimitBodyRefusesBeforeReadingWhole(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	type outcome struct {
		Refused  bool
		Size     int64 // what refuse was told
		HeadSeen string
		Read     int64 // bytes taken from the client's body
		Passed   int   // bytes the handler got
	}
	tests := []struct {
		name    string
		size    int
		chunked bool
		want    outcome
	}{
		{"declared, over", limit + 1, false,
			outcome{Refused: true, Size: limit + 1, HeadSeen: `{"id":9,`, Read: headBytes}},
		{"chunked, over", 3 * limit, true,
			outcome{Refused: true, Size: -1, HeadSeen: `{"id":9,`, Read: limit + 1}},
		{"chunked, within", limit, true, outcome{Read: limit, Passed: limit}},
		{"declared, within", limit, false, outcome{Read: limit, Passed: limit}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got outcome
			h := LimitBody(limit, func(w http.ResponseWriter, head []byte, size int64) {
				got.Refused, got.Size, got.HeadSeen = true, size, string(head[:8])
				w.WriteHeader(http.StatusRequestEntityTooLarge)
			}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got.Passed = len(b)
			}))
			body := &countingReader{r: strings.NewReader(`{"id":9,` + strings.Repeat("x", tt.size-8))}
			req := httptest.NewRequest(http.MethodPost, "/mcp", body)
			req.ContentLength = int64(tt.size)
			if tt.chunked {
				req.ContentLength = -1
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			got.Read = body.n
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
