package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSharedServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, addr, tokensFile, want string
	}{
		{"loopback, no tokens file: one person's machine", "127.0.0.1:8080", "", ""},
		{"localhost", "localhost:8080", "", ""},
		{"IPv6 loopback", "[::1]:8080", "", ""},
		{"a tokens file names clients", "127.0.0.1:8080", "/etc/zen/tokens", "ZEN_AUTH_TOKENS_FILE names its clients"},
		{"every interface", "0.0.0.0:8080", "", "its MCP listener 0.0.0.0:8080 is not on loopback"},
		{"no host is every interface", ":8080", "", "its MCP listener :8080 is not on loopback"},
		{"a host name", "zen.internal:8080", "", "its MCP listener zen.internal:8080 is not on loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := sharedServer(func(k string) string {
				if k == "ZEN_AUTH_TOKENS_FILE" {
					return tt.tokensFile
				}
				return ""
			}, tt.addr)
			if got != tt.want {
				t.Errorf("sharedServer(%s, %q) = %q, want %q", tt.addr, tt.tokensFile, got, tt.want)
			}
		})
	}
}

// TestOwnServer: only a server its one user alone can reach lets clients
// see the paths of zen's own files.
func TestOwnServer(t *testing.T) {
	t.Parallel()
	local := settings{mcpAddr: "127.0.0.1:8080", httpAddr: "127.0.0.1:8081", grpcAddr: "127.0.0.1:9090",
		getenv: func(string) string { return "" }}
	tokens := local
	tokens.getenv = func(k string) string { return map[string]string{"ZEN_AUTH_TOKENS_FILE": "/etc/zen/tokens"}[k] }
	for _, tt := range []struct {
		name string
		role string
		edit func(*settings)
		want bool
	}{
		{"stdio", "stdio", nil, true},
		{"serve on loopback", "serve", nil, true},
		{"serve with a tokens file", "serve", func(s *settings) { *s = tokens }, false},
		{"serve's MCP beyond loopback", "serve", func(s *settings) { s.mcpAddr = ":8080" }, false},
		{"serve's gateway beyond loopback", "serve", func(s *settings) { s.httpAddr = "0.0.0.0:8081" }, false},
		{"serve's gRPC beyond loopback", "serve", func(s *settings) { s.grpcAddr = "10.0.0.5:9090" }, false},
		{"a router alone on loopback", "router", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := local
			if tt.edit != nil {
				tt.edit(&s)
			}
			if got := ownServer(&s, tt.role); got != tt.want {
				t.Errorf("ownServer(%s) = %v, want %v", tt.role, got, tt.want)
			}
		})
	}
}

func TestZenOwnFiles(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"HOME": "/home/ann", "ZEN_AUTH_TOKENS_FILE": "/etc/zen/tokens", "CLI_CLIENTS_CONFIG_PATH": "/etc/zen/clis",
		"ZEN_GRPC_TLS_CERT": "/tls/cert.pem", "ZEN_GRPC_TLS_KEY": "/tls/key.pem", "ZEN_GRPC_TLS_CA": "/tls/ca.pem",
		"OPENAI_MODELS_CONFIG_PATH": "/etc/zen/openai.json", "CUSTOM_MODELS_CONFIG_PATH": "/etc/zen/custom.json",
	}
	getenv := func(k string) string { return env[k] }
	dotEnvs := dotEnvFiles(getenv, "serve")
	want := []string{dotEnvs[0], "/home/ann/.config/zen/.env", "/etc/zen/tokens", "/etc/zen/clis",
		"/tls/cert.pem", "/tls/key.pem", "/tls/ca.pem", "/etc/zen/openai.json", "/etc/zen/custom.json",
		"/home/ann/.zen/cli_clients", "/home/ann/.local/state/zen",
		// By identity too: a hard link to the store's files, wherever it is,
		// is one of them (the directory's name covers only its own paths).
		"/home/ann/.local/state/zen/memory.db", "/home/ann/.local/state/zen/memory.db-wal",
		"/home/ann/.local/state/zen/memory.db-shm"}
	got := zenOwnFiles(getenv, dotEnvs)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zen's own files (-want +got):\n%s", diff)
	}
}
