package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
)

const serviceToken = "service-token-0123456789abcdef"

// grpcAs calls memory's GetThread and ListThreads on addr with the given
// metadata, as a process that reaches the port would.
func grpcAs(t *testing.T, addr string, creds credentials.TransportCredentials, md ...string) (
	*memoryv1.GetThreadResponse, *memoryv1.ListThreadsResponse, error, error) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(t.Context(), md...), 10*time.Second)
	defer cancel()
	mem := memoryv1.NewMemoryServiceClient(conn)
	got, getErr := mem.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: "00000000-0000-4000-8000-000000000000"})
	list, listErr := mem.ListThreads(ctx, &memoryv1.ListThreadsRequest{})
	return got, list, getErr, listErr
}

// TestSecurityInnerGRPC: with auth on, a process that reaches a gRPC port
// can do nothing without the service credential, and cannot say whom it
// acts for (issue 11, item 8).
func TestSecurityInnerGRPC(t *testing.T) {
	t.Parallel()
	configured := startTwoClients(t, map[string]string{"ZEN_SERVICE_TOKEN": serviceToken})
	generated := startTwoClients(t, nil) // serve makes a token of its own
	plain := insecure.NewCredentials()
	refusedBoth := func(t *testing.T, addr string, md ...string) {
		t.Helper()
		_, list, getErr, listErr := grpcAs(t, addr, plain, md...)
		for _, err := range []error{getErr, listErr} {
			if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "ZEN_SERVICE_TOKEN") {
				t.Errorf("call without the service credential: %v, want Unauthenticated naming ZEN_SERVICE_TOKEN", err)
			}
		}
		if len(list.GetThreads()) > 0 {
			t.Errorf("threads listed without the service credential: %v", list.GetThreads())
		}
	}
	for _, c := range []struct {
		name string
		tc   *twoClients
		md   []string
	}{
		{"no credential, a configured token", configured, nil},
		{"acting for bob with no credential", configured, []string{"zen-client-id", "bob"}},
		{"acting for bob with a wrong token", configured,
			[]string{"zen-client-id", "bob", "authorization", "Bearer " + strings.Repeat("x", 30)}},
		{"acting for bob with bob's client token", configured,
			[]string{"zen-client-id", "bob", "authorization", "Bearer " + bobToken}},
		{"acting for bob on a serve that made its own token", generated, []string{"zen-client-id", "bob"}},
		{"a guessed token on a serve that made its own", generated, []string{"authorization", "Bearer " + serviceToken}},
	} {
		t.Run(c.name, func(t *testing.T) {
			refusedBoth(t, c.tc.p.addr("grpc"), c.md...)
			c.tc.untouched(t)
		})
	}
	t.Run("reflection without the credential", func(t *testing.T) {
		conn, err := grpc.NewClient(configured.p.addr("grpc"), grpc.WithTransportCredentials(plain))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
		if err == nil {
			_ = stream.Send(&reflectionpb.ServerReflectionRequest{
				MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("reflection answered without the credential: %v", err)
		}
	})
	t.Run("health answers probes without a credential", func(t *testing.T) {
		conn, err := grpc.NewClient(configured.p.addr("grpc"), grpc.WithTransportCredentials(plain))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		resp, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health: %v %v", resp, err)
		}
	})
	// The control: zen's own credential is what makes an identity count.
	t.Run("the service credential acting for bob", func(t *testing.T) {
		got, _, err, _ := grpcAs(t, configured.p.addr("grpc"), plain,
			"authorization", "Bearer "+serviceToken, "zen-client-id", "bob")
		if status.Code(err) != codes.NotFound || got != nil {
			t.Errorf("GetThread of a missing thread with the credential: %v, want NotFound", err)
		}
		conn, _ := grpc.NewClient(configured.p.addr("grpc"), grpc.WithTransportCredentials(plain))
		defer conn.Close()
		ctx := metadata.AppendToOutgoingContext(t.Context(), "authorization", "Bearer "+serviceToken, "zen-client-id", "bob")
		th, err := memoryv1.NewMemoryServiceClient(conn).GetThread(ctx,
			&memoryv1.GetThreadRequest{ThreadId: configured.bobID})
		if err != nil || th.GetThread().GetThreadId() != configured.bobID {
			t.Errorf("bob's thread through zen's credential: %v", err)
		}
	})
	t.Run("a split role with client tokens and no service token does not start", func(t *testing.T) {
		out, err := runZen(t, map[string]string{"ZEN_AUTH_TOKEN": aliceToken}, "memory", "--grpc-addr", "127.0.0.1:0")
		if err == nil || !strings.Contains(out, "ZEN_SERVICE_TOKEN") {
			t.Errorf("zen memory with ZEN_AUTH_TOKEN and no ZEN_SERVICE_TOKEN: %v\n%s", err, out)
		}
	})
}

// TestSecurityMutualTLS: with ZEN_GRPC_TLS_* set the roles talk mutual TLS;
// a plaintext client, or one with a certificate of another CA, is refused
// before any method runs, and zen itself still works end to end.
func TestSecurityMutualTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, caKey := writeCA(t, dir, "zen-ca")
	writeLeaf(t, dir, "zen", ca, caKey)
	otherCA, otherKey := writeCA(t, dir, "other-ca")
	writeLeaf(t, dir, "intruder", otherCA, otherKey)
	env := map[string]string{"ZEN_SERVICE_TOKEN": serviceToken, "ZEN_GRPC_TLS_CERT": filepath.Join(dir, "zen.crt"),
		"ZEN_GRPC_TLS_KEY": filepath.Join(dir, "zen.key"), "ZEN_GRPC_TLS_CA": filepath.Join(dir, "zen-ca.crt")}
	tc := startTwoClients(t, env) // bob's chat went through edge -> memory, router, executor over mTLS
	addr := tc.p.addr("grpc")
	withToken := []string{"authorization", "Bearer " + serviceToken, "zen-client-id", "bob"}

	pool := x509.NewCertPool()
	pool.AddCert(ca)
	intruder, err := tls.LoadX509KeyPair(filepath.Join(dir, "intruder.crt"), filepath.Join(dir, "intruder.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		creds credentials.TransportCredentials
	}{
		{"plaintext with the service token", insecure.NewCredentials()},
		{"TLS without a client certificate", credentials.NewTLS(&tls.Config{RootCAs: pool})},
		{"TLS with another CA's certificate", credentials.NewTLS(&tls.Config{RootCAs: pool,
			Certificates: []tls.Certificate{intruder}})},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, list, getErr, listErr := grpcAs(t, addr, c.creds, withToken...)
			// Unavailable: the handshake failed, before any method ran.
			if status.Code(getErr) != codes.Unavailable || status.Code(listErr) != codes.Unavailable || got != nil ||
				list != nil {
				t.Errorf("answered: %v %v (%v, %v), want Unavailable", got, list, getErr, listErr)
			}
			tc.untouched(t)
		})
	}
	t.Run("zen health speaks mutual TLS", func(t *testing.T) {
		if out, err := runZen(t, env, "health", "--grpc", addr); err != nil {
			t.Errorf("zen health with the TLS variables: %v\n%s", err, out)
		}
	})
}

// writeCA writes name.crt and returns the CA's certificate and key.
func writeCA(t *testing.T, dir, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, name+".crt"), "CERTIFICATE", der)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// writeLeaf writes name.crt and name.key: a certificate for loopback, for
// servers and clients alike, as a role's is.
func writeLeaf(t *testing.T, dir, name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, name+".crt"), "CERTIFICATE", der)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, name+".key"), "PRIVATE KEY", keyDER)
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runZen runs a zen command that is expected to end by itself (at most
// 20 s) and returns what it printed.
func runZen(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, zenBin, args...)
	cmd.Env, cmd.Dir = baseEnv(t, env), t.TempDir()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSecurityTokenOnSomeRolesOnly: a memory started without the service
// token that the gateway presents must not serve every client as one
// anonymous client (who would then see everyone's threads): it refuses.
func TestSecurityTokenOnSomeRolesOnly(t *testing.T) {
	t.Parallel()
	other := startZen(t, fakeEnv(fakemodel.New(t)), []string{"grpc"}, serveArgs()...)
	mem := startZen(t, nil, []string{"grpc"}, "memory", "--grpc-addr", "127.0.0.1:0")
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("alice "+aliceToken+"\nbob "+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startZen(t, map[string]string{"ZEN_AUTH_TOKENS_FILE": file, "ZEN_SERVICE_TOKEN": serviceToken,
		"ZEN_MEMORY_ADDR": mem.addr("grpc"), "ZEN_ROUTER_ADDR": other.addr("grpc"),
		"ZEN_EXECUTOR_ADDR": other.addr("grpc")}, []string{"gateway"}, "gateway", "--http-addr", "127.0.0.1:0")
	base := "http://" + gw.addr("gateway")
	line := `{"thread_id":"0d4b8f2e-5a1c-4f0e-8b7d-2c9e6a1f3b11","tool_name":"chat",` +
		`"turns":[{"role":"ROLE_USER","content":"alice's secret plan"}]}` + "\n"
	code, body := request(t, "POST", base+"/v1/threads:import", aliceToken, line)
	if code == http.StatusOK || !strings.Contains(body, "ZEN_SERVICE_TOKEN") {
		t.Errorf("import through a memory without the service token: %d %s", code, body)
	}
	code, body = request(t, "GET", base+"/v1/threads", bobToken, "")
	if code == http.StatusOK || strings.Contains(body, "alice's secret plan") ||
		!strings.Contains(body, "ZEN_SERVICE_TOKEN") {
		t.Errorf("bob's list through a memory without the service token: %d %s", code, body)
	}
}
