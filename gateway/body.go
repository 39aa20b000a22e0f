package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/zenmcp/zen/services/platform/httperr"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxJSONBody bounds the body of every route but import. Each takes a few
// fields (a model's name, a branch's title); without a bound the generated
// routes decoded a body of any size into memory.
const maxJSONBody = 1 << 20

// bodyBounds are what request bodies are held to.
type bodyBounds struct {
	size       int64         // every route's but import's (maxImportBytes)
	time       time.Duration // how long a body may take to arrive
	importTime time.Duration // how long an import's may
}

// servedBodies are the bounds a served gateway holds bodies to.
var servedBodies = bodyBounds{size: maxJSONBody, time: serve.BodyTime, importTime: importReadTime}

// boundBodies reads a body whole, up to limit, before the route sees it,
// and refuses a larger one (413). Import reads its own as it arrives, to
// its own bound.
func boundBodies(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == importPath || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > limit {
			refuseLargeBody(w, r, limit)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		switch {
		case err != nil:
			httperr.Status(w, http.StatusBadRequest, status.Newf(codes.InvalidArgument,
				"could not read the request body: %v; send it whole at once", err))
			return
		case int64(len(body)) > limit:
			refuseLargeBody(w, r, limit)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func refuseLargeBody(w http.ResponseWriter, r *http.Request, limit int64) {
	msg := fmt.Sprintf("%s %s takes a body of at most %d bytes", r.Method, r.URL.Path, limit)
	httperr.Status(w, http.StatusRequestEntityTooLarge, status.New(codes.InvalidArgument, msg))
}
