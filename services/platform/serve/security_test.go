package serve

import (
	"context"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

func TestAuthorize(t *testing.T) {
	t.Parallel()
	const token = "service-token-0123456789"
	withToken, err := LoadSecurity(func(k string) string {
		return map[string]string{"ZEN_SERVICE_TOKEN": token}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	open := Security{}
	const method = "/zen.memory.v1.MemoryService/GetThread"
	for _, c := range []struct {
		name       string
		sec        Security
		method     string
		md         []string
		wantCode   codes.Code
		wantClient string
	}{
		{"health needs nothing", withToken, "/grpc.health.v1.Health/Check", nil, codes.OK, ""},
		{"health ignores a claimed client", withToken, "/grpc.health.v1.Health/Check",
			[]string{auth.MetadataKey, "bob"}, codes.OK, ""},
		{"no credential", withToken, method, nil, codes.Unauthenticated, ""},
		{"a wrong token", withToken, method, []string{"authorization", "Bearer nope-nope-nope-nope"},
			codes.Unauthenticated, ""},
		{"the token without Bearer", withToken, method, []string{"authorization", token}, codes.Unauthenticated, ""},
		{"two authorization values", withToken, method,
			[]string{"authorization", "Bearer " + token, "authorization", "Bearer " + token}, codes.Unauthenticated, ""},
		{"the token, anonymous", withToken, method, []string{"authorization", "Bearer " + token}, codes.OK, ""},
		{"the token, acting for bob", withToken, method,
			[]string{"authorization", "Bearer " + token, auth.MetadataKey, "bob"}, codes.OK, "bob"},
		{"the token, two identities", withToken, method,
			[]string{"authorization", "Bearer " + token, auth.MetadataKey, "bob", auth.MetadataKey, "alice"},
			codes.InvalidArgument, ""},
		{"reflection needs the token", withToken, "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", nil,
			codes.Unauthenticated, ""},
		{"no token configured, anonymous", open, method, nil, codes.OK, ""},
		{"no token configured, a claimed client", open, method, []string{auth.MetadataKey, "bob"},
			codes.FailedPrecondition, ""},
		{"no token configured, a credential", open, method, []string{"authorization", "Bearer " + token},
			codes.FailedPrecondition, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(c.md...))
			got, err := c.sec.authorize(ctx, c.method)
			if grpcstatus.Code(err) != c.wantCode {
				t.Fatalf("authorize: %v, want %v", err, c.wantCode)
			}
			if err == nil && auth.Client(got) != c.wantClient {
				t.Errorf("client %q, want %q", auth.Client(got), c.wantClient)
			}
		})
	}
}

func TestLoadSecurityNamesTheVariable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"ZEN_SERVICE_TOKEN": "short"}, "ZEN_SERVICE_TOKEN"},
		{map[string]string{"ZEN_GRPC_TLS_CERT": "/a.crt"}, "ZEN_GRPC_TLS_KEY"},
		{map[string]string{"ZEN_GRPC_TLS_CERT": "/nonexistent/a.crt", "ZEN_GRPC_TLS_KEY": "/nonexistent/a.key",
			"ZEN_GRPC_TLS_CA": "/nonexistent/ca.crt"}, "ZEN_GRPC_TLS_CERT"},
	} {
		_, err := LoadSecurity(func(k string) string { return c.env[k] })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadSecurity(%v): %v, want an error naming %s", c.env, err, c.want)
		}
	}
}
