package gateway

import (
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zenmcp/zen/services/platform/httperr"
	"github.com/zenmcp/zen/services/platform/textcut"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// importPath reads JSON lines, so it also takes the JSON-lines types.
const importPath = "/v1/threads:import"

var (
	jsonTypes   = []string{"application/json"}
	importTypes = []string{"application/json", "application/x-ndjson", "application/jsonl"}
)

// jsonOnly refuses a request that changes something unless its body is
// declared JSON. A web page can make the browser send text/plain, form or
// multipart bodies, or a body with no type, to any address without asking
// first; any other type makes the browser ask the server (a CORS
// preflight), which the gateway never grants. So every POST, PUT and PATCH
// must name a JSON type, models:resolve included (it changes nothing, but
// one rule for every POST leaves no route to forget). A DELETE may come
// without a body: browsers always ask before sending a DELETE elsewhere.
func jsonOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions:
			// reads: a page cannot read another site's answers (hostguard
			// keeps rebound names out)
		case r.Method == http.MethodDelete && ct == "" && r.ContentLength == 0:
			// no body, and no page can send a DELETE elsewhere unasked
		default:
			accepted := jsonTypes
			if r.URL.Path == importPath {
				accepted = importTypes
			}
			if mt, _, err := mime.ParseMediaType(ct); err != nil || !slices.Contains(accepted, mt) {
				msg := fmt.Sprintf("%s %s needs the header Content-Type: %s; got %q (other types are refused "+
					"so that web pages cannot send this request from a browser)",
					r.Method, r.URL.Path, strings.Join(accepted, " or "), ct)
				httperr.Status(w, http.StatusUnsupportedMediaType, status.New(codes.InvalidArgument, msg))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// utf8Only refuses a request whose path or query is not UTF-8 (after its
// percent-decoding): every string the gateway passes on must be, and a
// generated route's gRPC client could only fail to marshal one, as zen's
// fault (500).
func utf8Only(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bad := ""
		if !utf8.ValidString(r.URL.Path) {
			bad = "path " + quoteStart(r.URL.Path)
		}
		for k, vs := range r.URL.Query() {
			if !utf8.ValidString(k) {
				bad = "query parameter " + quoteStart(k)
			}
			for _, v := range vs {
				if !utf8.ValidString(v) {
					bad = "value " + quoteStart(v) + " of query parameter " + quoteStart(k)
				}
			}
		}
		if bad != "" {
			httperr.Status(w, http.StatusBadRequest, status.New(codes.InvalidArgument, "the "+bad+
				" is not UTF-8 once percent-decoded: send paths and parameters as UTF-8, percent-encoded"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// quoteStart quotes the start of s, a request's, in a refusal: a request
// line may be a megabyte long, and each byte that is not UTF-8 quotes as
// four.
func quoteStart(s string) string {
	const most = 200
	if len(s) <= most {
		return strconv.Quote(s)
	}
	return strconv.Quote(textcut.Prefix(s, most)) + "…"
}
