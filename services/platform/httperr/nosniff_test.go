package httperr

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// An error answer may quote what the client sent (the path a page sent a
// browser to: GET /<script>...). http.Error, which the edge and the muxes
// used before, says X-Content-Type-Options: nosniff, so that no browser
// that sniffs reads the body as a page; every error answer keeps it.
func TestErrorAnswersAreNotSniffed(t *testing.T) {
	t.Parallel()
	for name, h := range map[string]http.Handler{
		"NotFound": NotFound("MCP is at /mcp"),
		"Error": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Error(w, codes.InvalidArgument, "bad path "+r.URL.Path)
		}),
		"FromError": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			FromError(w, errors.New("bad path "+r.URL.Path))
		}),
		"Status": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			Status(w, http.StatusUnsupportedMediaType, status.New(codes.InvalidArgument, "bad path "+r.URL.Path))
		}),
		"ReplacePlainText": ReplacePlainText(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "bad path "+r.URL.Path, http.StatusBadRequest)
		})),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/%3Cscript%3Ealert(1)%3C/script%3E", nil))
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff, on an answer that quotes the path:\n%s",
					got, rec.Body)
			}
		})
	}
}
