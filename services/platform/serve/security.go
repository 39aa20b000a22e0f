package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// Security is how zen's roles prove to each other that a gRPC call comes
// from one of them: a service token shared by every role
// (ZEN_SERVICE_TOKEN) and, optionally, mutual TLS. With a token set, every
// method but health needs it, and only a caller that presented it may
// forward the client a call acts for.
type Security struct {
	token     string
	serverTLS *tls.Config
	clientTLS *tls.Config
}

// MinServiceTokenLen keeps the service token out of guessing range.
const MinServiceTokenLen = 16

// LoadSecurity reads ZEN_SERVICE_TOKEN and ZEN_GRPC_TLS_CERT, _KEY and _CA.
// Errors name the variable.
func LoadSecurity(getenv func(string) string) (Security, error) {
	var s Security
	s.token = strings.TrimSpace(getenv("ZEN_SERVICE_TOKEN"))
	if s.token != "" && len(s.token) < MinServiceTokenLen {
		return s, fmt.Errorf("ZEN_SERVICE_TOKEN: use at least %d characters (for example: openssl rand -hex 32)",
			MinServiceTokenLen)
	}
	paths := map[string]string{}
	for _, name := range []string{"ZEN_GRPC_TLS_CERT", "ZEN_GRPC_TLS_KEY", "ZEN_GRPC_TLS_CA"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			paths[name] = v
		}
	}
	if len(paths) == 0 {
		return s, nil
	}
	for _, name := range []string{"ZEN_GRPC_TLS_CERT", "ZEN_GRPC_TLS_KEY", "ZEN_GRPC_TLS_CA"} {
		if paths[name] == "" {
			return s, fmt.Errorf("%s: mutual TLS needs ZEN_GRPC_TLS_CERT, ZEN_GRPC_TLS_KEY and ZEN_GRPC_TLS_CA together", name)
		}
	}
	cert, err := tls.LoadX509KeyPair(paths["ZEN_GRPC_TLS_CERT"], paths["ZEN_GRPC_TLS_KEY"])
	if err != nil {
		return s, fmt.Errorf("ZEN_GRPC_TLS_CERT, ZEN_GRPC_TLS_KEY: %w", err)
	}
	caPEM, err := os.ReadFile(paths["ZEN_GRPC_TLS_CA"])
	if err != nil {
		return s, fmt.Errorf("ZEN_GRPC_TLS_CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return s, fmt.Errorf("ZEN_GRPC_TLS_CA: %s holds no PEM certificate", paths["ZEN_GRPC_TLS_CA"])
	}
	s.serverTLS = &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	s.clientTLS = &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}, RootCAs: pool}
	return s, nil
}

// Required reports whether callers must present the service token.
func (s Security) Required() bool { return s.token != "" }

// TLS reports whether the roles talk mutual TLS.
func (s Security) TLS() bool { return s.serverTLS != nil }

// WithGeneratedToken returns s with a random service token when it has
// none: roles that share one process need no configured token to know each
// other, and nobody outside the process can present it.
func (s Security) WithGeneratedToken() Security {
	if s.token == "" {
		b := make([]byte, 32)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		s.token = hex.EncodeToString(b)
	}
	return s
}

// ServerOptions check the credential on every call but health, and make the
// forwarded client identity visible (auth.Client) only to calls that
// presented it.
func (s Security) ServerOptions() []grpc.ServerOption {
	var opts []grpc.ServerOption
	if s.serverTLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.serverTLS)))
	}
	return append(opts, grpc.InTapHandle(s.tap), grpc.ChainUnaryInterceptor(s.unary),
		grpc.ChainStreamInterceptor(s.stream))
}

// tap refuses a call that authorize would refuse as soon as its headers
// arrive. grpc-go reads a unary call's whole message before any interceptor
// runs, so without it a caller with no token could have the server buffer
// MaxMessageBytes on each stream it opens. The interceptors still decide
// the context a handler runs in (and cover Local, which has no transport).
func (s Security) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	_, err := s.authorize(metadata.NewIncomingContext(ctx, info.Header), info.FullMethodName)
	return ctx, err
}

// unary checks a unary call (ServerOptions; Local runs it too).
func (s Security) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler) (any, error) {
	ctx, err := s.authorize(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

// stream checks a streaming call (ServerOptions; Local runs it too).
func (s Security) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo,
	handler grpc.StreamHandler) error {
	ctx, err := s.authorize(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	return handler(srv, &authorizedStream{ServerStream: ss, ctx: ctx})
}

// errNoServiceCredential is what a caller without the service token gets.
var errNoServiceCredential = grpcstatus.Error(codes.Unauthenticated,
	"zen's inner services answer only zen's own roles: send the service token as "+
		"\"authorization: Bearer <ZEN_SERVICE_TOKEN>\" metadata")

// errTokenMismatch is a caller that speaks for a client, or presents a
// credential, to a role that has no service token.
var errTokenMismatch = grpcstatus.Error(codes.FailedPrecondition,
	"this zen role has no ZEN_SERVICE_TOKEN but its caller sent a credential or a client identity: "+
		"set the same ZEN_SERVICE_TOKEN on every role")

// authorize admits a call and returns the context its handler runs in.
func (s Security) authorize(ctx context.Context, method string) (context.Context, error) {
	if isHealth(method) {
		return ctx, nil // probes carry no credential; health tells nothing about threads
	}
	// The two keys alone, not a copy of all the metadata.
	clients, tokens := metadata.ValueFromIncomingContext(ctx, auth.MetadataKey),
		metadata.ValueFromIncomingContext(ctx, "authorization")
	if s.token == "" {
		// Nobody can prove to be a zen role, so nobody may say whom a call
		// acts for. A caller that tries is a role configured with a token
		// this one lacks: refuse rather than serve its clients as one
		// anonymous client who sees everyone's threads.
		if len(clients) > 0 || len(tokens) > 0 {
			return ctx, errTokenMismatch
		}
		return ctx, nil
	}
	presented, bearer := "", false
	if len(tokens) == 1 {
		presented, bearer = strings.CutPrefix(tokens[0], "Bearer ")
	}
	if !bearer {
		return ctx, errNoServiceCredential
	}
	if subtle.ConstantTimeCompare([]byte(presented), []byte(s.token)) != 1 {
		return ctx, errNoServiceCredential
	}
	if len(clients) == 1 {
		ctx = auth.WithClient(ctx, clients[0])
	} else if len(clients) > 1 {
		return ctx, grpcstatus.Error(codes.InvalidArgument, "a call acts for one client: send zen-client-id once")
	}
	return ctx, nil
}

type authorizedStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *authorizedStream) Context() context.Context { return s.ctx }

// DialOptions present the credential on every call.
func (s Security) DialOptions() []grpc.DialOption {
	var opts []grpc.DialOption
	if s.clientTLS != nil {
		opts = append(opts, grpc.WithTransportCredentials(credentials.NewTLS(s.clientTLS)))
	}
	if s.token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(serviceToken{token: s.token, tls: s.clientTLS != nil}))
	}
	return opts
}

// serviceToken sends the token as bearer metadata. Without TLS it still
// goes, in the clear, over what should be a private network: the token
// keeps out callers who merely reach the port.
type serviceToken struct {
	token string
	tls   bool
}

func (t serviceToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + t.token}, nil
}

func (t serviceToken) RequireTransportSecurity() bool { return t.tls }

// ErrServiceTokenNeeded is a split role started with client tokens but no
// service token: its inner services could not tell it from anyone else.
var ErrServiceTokenNeeded = errors.New("ZEN_SERVICE_TOKEN: with ZEN_AUTH_TOKEN or ZEN_AUTH_TOKENS_FILE set, " +
	"zen's roles need a service token they share (at least 16 characters, for example: openssl rand -hex 32), " +
	"so the inner gRPC services answer only them")
