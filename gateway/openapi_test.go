package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/auth"
)

// TestOpenAPIDescribesEveryRoute reads /openapi.json: it carries the
// version the gateway was given, and describes each route the gateway
// serves itself (the generated routes come from the same protos as the
// document).
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	h, _ := newTestGateway(t, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/openapi.json", nil))
	var doc struct {
		Info struct {
			Title   string `json:"title"`
			Version string `json:"version"`
		} `json:"info"`
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %v", rec.Code, err)
	}
	if doc.Info.Title != "zen gateway" || doc.Info.Version != testVersion {
		t.Errorf("title %q, version %q; want %q, %q", doc.Info.Title, doc.Info.Version, "zen gateway", testVersion)
	}
	for _, r := range ownRoutes(threadPaths{}, nil, nil) {
		method, path, _ := strings.Cut(r.pattern, " ")
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
			t.Errorf("the gateway serves %s; routes.swagger.json does not describe it", r.pattern)
		}
	}
}

// TestErrorsInOneShape refuses requests in each way the gateway can, from
// its guards, its own routes, its mux and the generated routes' mux: every
// answer is written the one way httperr writes.
func TestErrorsInOneShape(t *testing.T) {
	t.Parallel()
	h, _ := newTestGateway(t, auth.Tokens{opsToken: "ops"})
	const hint = "the gateway's routes are listed at GET /openapi.json"
	tests := []struct {
		name, method, path, host, token, contentType string
		status                                       int
		body                                         string
	}{
		{"no token", "GET", "/v1/models", "localhost", "", "", 401,
			`{"code":16,"message":"missing or invalid bearer token: send Authorization: Bearer <token> ` +
				`(ZEN_AUTH_TOKEN)","details":[]}`},
		{"foreign Host", "GET", "/v1/models", "evil.example", opsToken, "", 403,
			`{"code":7,"message":"Host \"evil.example\" is not a name this server answers to (a web page may be ` +
				`using DNS rebinding); if clients reach zen by that name, add it to ZEN_ALLOWED_HOSTS","details":[]}`},
		{"unknown path", "GET", "/nope", "localhost", opsToken, "", 404,
			`{"code":5,"message":"no route for GET /nope: ` + hint + `","details":[]}`},
		{"unknown route under /v1/", "GET", "/v1/nope", "localhost", opsToken, "", 404,
			`{"code":5,"message":"no route for GET /v1/nope: ` + hint + `","details":[]}`},
		{"wrong method on a generated route", "PUT", "/v1/models", "localhost", opsToken, "application/json", 405,
			`{"code":12,"message":"/v1/models takes no PUT: ` + hint + `","details":[]}`},
		{"query the route cannot read", "GET", "/v1/threads?page_size=many", "localhost", opsToken, "", 400,
			`{"code":3,"message":"parsing field \"page_size\": strconv.ParseInt: parsing \"many\": invalid ` +
				`syntax","details":[]}`},
		{"bad flag on an own route", "POST", "/v1/threads:import?replace=maybe", "localhost", opsToken,
			"application/json", 400, `{"code":3,"message":"replace must be true or false","details":[]}`},
		{"form body", "POST", "/v1/models:resolve", "localhost", opsToken, "text/plain", 415,
			`{"code":3,"message":"POST /v1/models:resolve needs the header Content-Type: application/json; got ` +
				`\"text/plain\" (other types are refused so that web pages cannot send this request from a ` +
				`browser)","details":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tt.method, "http://"+tt.host+tt.path, strings.NewReader("{}"))
			req.Host = tt.host
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			got := []any{rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()}
			want := []any{tt.status, "application/json", tt.body + "\n"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
