package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// readmeRoute is a gateway route the README's "Inspect over HTTP" section
// shows with curl.
type readmeRoute struct{ method, path string }

// readmeRoutes reads the curl lines of the README's "Inspect over HTTP"
// section: the method (-X, or POST when the line sends a body) and the
// path on the gateway's port, without its query.
func readmeRoutes(t *testing.T) []readmeRoute {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		routes  []readmeRoute
		section bool
		url     = regexp.MustCompile(`127\.0\.0\.1:8081(/[^\s'"?]*)`)
		method  = regexp.MustCompile(`-X\s+([A-Z]+)`)
		line    strings.Builder
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		text := sc.Text()
		if strings.HasPrefix(text, "## ") {
			section = text == "## Inspect over HTTP"
			continue
		}
		if !section {
			continue
		}
		// A command continued with a backslash is one command.
		line.WriteString(strings.TrimSuffix(text, "\\"))
		if strings.HasSuffix(text, "\\") {
			continue
		}
		cmd := line.String()
		line.Reset()
		m := url.FindStringSubmatch(cmd)
		if !strings.HasPrefix(cmd, "curl ") || m == nil {
			continue
		}
		r := readmeRoute{method: "GET", path: m[1]}
		if x := method.FindStringSubmatch(cmd); x != nil {
			r.method = x[1]
		} else if strings.Contains(cmd, " -d ") || strings.Contains(cmd, "--data") {
			r.method = "POST"
		}
		routes = append(routes, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return routes
}

// openAPIDoc is what the test reads of an OpenAPI 2.0 document.
type openAPIDoc struct {
	Swagger string `json:"swagger"`
	Info    struct {
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"info"`
	Paths map[string]map[string]json.RawMessage `json:"paths"`
}

// describes reports whether the document has an operation for method on
// a concrete path (a README's placeholder, or a model's name, stands in
// for each {parameter}).
func (d openAPIDoc) describes(method, path string) bool {
	param := regexp.MustCompile(`\\\{[a-z_]+\\\}`) // a {parameter} after regexp.QuoteMeta
	for template, ops := range d.Paths {
		pattern := "^" + param.ReplaceAllString(regexp.QuoteMeta(template), `[^/]+`) + "$"
		if _, ok := ops[strings.ToLower(method)]; ok && regexp.MustCompile(pattern).MatchString(path) {
			return true
		}
	}
	return false
}

// TestGatewayOpenAPIDescribesTheGateway reads /openapi.json from a running
// zen: one document about the gateway, carrying zen's own version, with an
// operation for every route the README shows.
func TestGatewayOpenAPIDescribesTheGateway(t *testing.T) {
	t.Parallel()
	p := startZen(t, fakeEnv(fakemodel.New(t)), []string{"mcp", "gateway"}, serveArgs()...)
	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
	version := cs.InitializeResult().ServerInfo.Version

	code, body := do(t, "GET", "http://"+p.addr("gateway")+"/openapi.json", "")
	if code != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %s", code, body)
	}
	var doc openAPIDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("GET /openapi.json is not JSON: %v", err)
	}
	if doc.Swagger != "2.0" || doc.Info.Title != "zen gateway" || doc.Info.Version != version {
		t.Errorf("swagger %q, title %q, version %q; want 2.0, %q and zen's version %q",
			doc.Swagger, doc.Info.Title, doc.Info.Version, "zen gateway", version)
	}
	routes := readmeRoutes(t)
	if len(routes) < 14 {
		t.Fatalf("read %d routes from the README's curl lines, want at least 14: %v", len(routes), routes)
	}
	for _, r := range routes {
		if !doc.describes(r.method, r.path) {
			t.Errorf("the README shows %s %s; /openapi.json has no such operation", r.method, r.path)
		}
	}
}

// statusBody is the one shape of an HTTP error from zen: google.rpc.Status
// in JSON, as grpc-gateway writes it for the generated routes.
type statusBody struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Details []json.RawMessage `json:"details"`
}

// canonical is statusBody as zen writes it: compact, HTML left as is, one
// line.
func (s statusBody) canonical() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return b.Bytes()
}

// TestHTTPErrorsShareOneShape refuses requests on both of zen's HTTP
// listeners in every way a user meets first: each answer is the same JSON
// shape, byte for byte as zen writes it, whoever refused (the gateway's
// generated routes, its own routes, its guards, the MCP SDK behind the
// edge, either listener's mux).
func TestHTTPErrorsShareOneShape(t *testing.T) {
	t.Parallel()
	p := startZen(t, mergeEnv(fakeEnv(fakemodel.New(t)), map[string]string{"ZEN_AUTH_TOKEN": aliceToken}),
		[]string{"mcp", "gateway"}, serveArgs()...)
	gw, edge := "http://"+p.addr("gateway"), "http://"+p.addr("mcp")
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
		`"capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	jsonType := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name, method, url, token, host, body string
		header                               map[string]string
		status, code                         int
	}{
		{"gateway without a token", "GET", gw + "/v1/models", "", "", "", nil, 401, 16},
		{"gateway unknown route", "GET", gw + "/v1/nope", aliceToken, "", "", nil, 404, 5},
		{"gateway unknown path", "GET", gw + "/nope", aliceToken, "", "", nil, 404, 5},
		{"gateway unknown thread", "GET", gw + "/v1/threads/0b7c7f2e-5d0c-4c1e-9a57-2d4c0c1b2a11", aliceToken,
			"", "", nil, 404, 5},
		{"gateway bad query", "GET", gw + "/v1/threads?page_size=many", aliceToken, "", "", nil, 400, 3},
		{"gateway bad import flag", "POST", gw + "/v1/threads:import?replace=maybe", aliceToken, "", "{}",
			jsonType, 400, 3},
		{"gateway form body", "POST", gw + "/v1/models:resolve", aliceToken, "", `{"model":"auto"}`,
			map[string]string{"Content-Type": "text/plain"}, 415, 3},
		{"gateway foreign host", "GET", gw + "/v1/models", aliceToken, "evil.example", "", nil, 403, 7},
		{"edge without a token", "POST", edge + "/mcp", "", "", initialize, jsonType, 401, 16},
		{"edge bad request", "POST", edge + "/mcp", aliceToken, "", initialize, jsonType, 400, 3},
		{"edge unknown path", "GET", edge + "/nope", aliceToken, "", "", nil, 404, 5},
		{"edge foreign host", "POST", edge + "/mcp", aliceToken, "evil.example", initialize, jsonType, 403, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%d %q, want %d application/json: %s", resp.StatusCode, resp.Header.Get("Content-Type"),
					tt.status, raw)
			}
			var got statusBody
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("not {code, message, details}: %v: %s", err, raw)
			}
			if got.Code != tt.code || got.Message == "" || got.Details == nil {
				t.Errorf("code %d, message %q, details %v; want code %d, a message and a details list",
					got.Code, got.Message, got.Details, tt.code)
			}
			if diff := cmp.Diff(string(got.canonical()), string(raw)); diff != "" {
				t.Errorf("spacing differs from zen's one way of writing it (-want +got):\n%s", diff)
			}
		})
	}
}
