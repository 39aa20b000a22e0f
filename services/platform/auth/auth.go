// Package auth checks bearer tokens on zen's HTTP endpoints and carries the
// client identity a token names to the services behind them, as gRPC
// metadata, so each client sees only its own conversations.
package auth

import (
	"bufio"
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/zenmcp/zen/services/platform/httperr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
)

// MetadataKey carries the client identity between zen's services. Only the
// edge and the gateway set it, from a verified bearer token; the inner
// services believe it only from a caller that presented the service
// credential (serve.Security), and then as auth.Client.
const MetadataKey = "zen-client-id"

// Tokens maps bearer tokens to the clients they name. Empty means auth is
// off.
type Tokens map[string]string

// Load reads ZEN_AUTH_TOKEN (one token, client "default") and
// ZEN_AUTH_TOKENS_FILE (lines of "client token"; # starts a comment).
func Load(getenv func(string) string) (Tokens, error) {
	t := Tokens{}
	if tok := strings.TrimSpace(getenv("ZEN_AUTH_TOKEN")); tok != "" {
		if len(tok) < 16 {
			return nil, fmt.Errorf("ZEN_AUTH_TOKEN: use at least 16 characters (for example: openssl rand -hex 32)")
		}
		t[tok] = "default"
	}
	path := strings.TrimSpace(getenv("ZEN_AUTH_TOKENS_FILE"))
	if path == "" {
		return t, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ZEN_AUTH_TOKENS_FILE: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		client, tok, ok := strings.Cut(line, " ")
		tok = strings.TrimSpace(tok)
		if !ok || client == "" || len(tok) < 16 || strings.ContainsAny(tok, " \t") {
			return nil, fmt.Errorf("ZEN_AUTH_TOKENS_FILE %s:%d: want \"<client> <token of 16 or more characters>\"", path, n)
		}
		if other, dup := t[tok]; dup {
			return nil, fmt.Errorf("ZEN_AUTH_TOKENS_FILE %s:%d: this token is already %s's", path, n, other)
		}
		t[tok] = client
	}
	return t, sc.Err()
}

// On reports whether requests need a token.
func (t Tokens) On() bool { return len(t) > 0 }

// client finds the client a presented token names, comparing in constant
// time so a token cannot be guessed from timings.
func (t Tokens) client(presented string) (string, bool) {
	found, name := false, ""
	for tok, client := range t {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(presented)) == 1 {
			found, name = true, client
		}
	}
	return name, found
}

type clientKey struct{}

// WithClient records the calling client in ctx.
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// Client returns the calling client, or "" when auth is off.
func Client(ctx context.Context) string {
	c, _ := ctx.Value(clientKey{}).(string)
	return c
}

// Require wraps h: without a valid bearer token the answer is 401 (except
// for the paths in open); with one, the request's context names its client.
func (t Tokens) Require(h http.Handler, open ...string) http.Handler {
	if !t.On() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range open {
			if r.URL.Path == p {
				h.ServeHTTP(w, r)
				return
			}
		}
		client, valid := t.ClientOf(r)
		if !valid {
			w.Header().Set("WWW-Authenticate", `Bearer realm="zen"`)
			httperr.Error(w, codes.Unauthenticated,
				"missing or invalid bearer token: send Authorization: Bearer <token> (ZEN_AUTH_TOKEN)")
			return
		}
		h.ServeHTTP(w, r.WithContext(WithClient(r.Context(), client)))
	})
}

// ClientOf returns the client r's bearer token names, and whether it names
// one: the one reading of the Authorization header.
func (t Tokens) ClientOf(r *http.Request) (string, bool) {
	presented, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !t.On() {
		return "", false
	}
	return t.client(strings.TrimSpace(presented))
}

// ClientInterceptor forwards the client identity in ctx to the next
// service.
func ClientInterceptor() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(UnaryClientInterceptor),
		grpc.WithChainStreamInterceptor(StreamClientInterceptor),
	}
}

// UnaryClientInterceptor is ClientInterceptor's unary half, exported for
// connections that are not dialled (serve.Local) but must forward the same.
func UnaryClientInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(forwardClient(ctx), method, req, reply, cc, opts...)
}

// StreamClientInterceptor is ClientInterceptor's streaming half.
func StreamClientInterceptor(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(forwardClient(ctx), desc, cc, method, opts...)
}

// forwardClient puts the client identity in ctx into the outgoing metadata.
func forwardClient(ctx context.Context) context.Context {
	// Set, never append: whatever else put an identity in the outgoing
	// metadata, the call carries the verified one or none.
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Delete(MetadataKey)
	if c := Client(ctx); c != "" {
		md.Set(MetadataKey, c)
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// Verifier checks tokens for the MCP SDK's bearer middleware: the client a
// token names becomes the session's user, which the SDK also uses to keep
// one client from taking over another's session.
func (t Tokens) Verifier() func(ctx context.Context, token string, r *http.Request) (*mcpauth.TokenInfo, error) {
	return func(_ context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		client, ok := t.client(token)
		if !ok {
			return nil, fmt.Errorf("%w: unknown bearer token", mcpauth.ErrInvalidToken)
		}
		// Static tokens do not expire; the SDK wants a time all the same.
		return &mcpauth.TokenInfo{UserID: client, Expiration: time.Now().Add(24 * time.Hour)}, nil
	}
}
