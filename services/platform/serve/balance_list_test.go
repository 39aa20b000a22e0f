package serve

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// TestDialListWithAnyWhitespace: a list written over several lines, or
// with tabs (a YAML block, an .env continued), passes CheckTarget, so Dial
// must dial it too, every replica of it.
func TestDialListWithAnyWhitespace(t *testing.T) {
	t.Parallel()
	a, b := startReplica(t, ok), startReplica(t, ok)
	target := a.addr + ",\n\t" + b.addr + " \n"
	if err := CheckTarget(target); err != nil {
		t.Fatalf("CheckTarget(%q): %v", target, err)
	}
	conn, err := Dial(target)
	if err != nil {
		t.Fatalf("Dial(%q): %v", target, err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	waitUntil(t, ctx, "both replicas to get a call", func() bool {
		_ = callFake(ctx, conn, "GetThread")
		return a.calls.Load() > 0 && b.calls.Load() > 0
	})
}

// TestDialListChecksEachReplicasName: with TLS, each replica of a list
// shows a certificate for the name it was listed by, not the first one's.
// Here one replica's certificate names localhost alone, the other's
// 127.0.0.1 alone: both must serve.
func TestDialListChecksEachReplicasName(t *testing.T) {
	t.Parallel()
	ca, caKey := testCA(t)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	byName := startTLSReplica(t, testLeaf(t, ca, caKey, &x509.Certificate{DNSNames: []string{"localhost"}}))
	byIP := startTLSReplica(t, testLeaf(t, ca, caKey, &x509.Certificate{IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}))
	_, namePort, _ := net.SplitHostPort(byName.addr)
	target := "localhost:" + namePort + "," + byIP.addr
	conn, err := Dial(target, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		MinVersion: tls.VersionTLS13, RootCAs: pool})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for byName.calls.Load() == 0 || byIP.calls.Load() == 0 {
		if err := callFake(ctx, conn, "GetThread"); err != nil {
			t.Fatalf("calls to %s reached the replicas %d and %d times, then: %v", target, byName.calls.Load(),
				byIP.calls.Load(), err)
		}
	}
}

// TestCheckTargetBoundsAList: a list longer than maxListed is refused with
// what to do instead.
func TestCheckTargetBoundsAList(t *testing.T) {
	t.Parallel()
	list := func(n int) string {
		addrs := make([]string, n)
		for i := range addrs {
			addrs[i] = fmt.Sprintf("127.0.0.1:%d", 9100+i)
		}
		return strings.Join(addrs, ",")
	}
	if err := CheckTarget(list(maxListed)); err != nil {
		t.Errorf("a list of %d: %v", maxListed, err)
	}
	err := CheckTarget(list(maxListed + 1))
	if want := fmt.Sprintf("names %d addresses; zen dials at most %d", maxListed+1, maxListed); err == nil ||
		!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "dns:///") {
		t.Errorf("a list of %d: %v; want an error containing %q and naming dns:///", maxListed+1, err, want)
	}
}

func startTLSReplica(t *testing.T, cert tls.Certificate) *replica {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{addr: lis.Addr().String(), handle: ok}
	r.g = NewGRPC(grpc.Creds(credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS13,
		Certificates: []tls.Certificate{cert}})))
	r.g.RegisterService(fakeZenService(fakeMemory, []string{"GetThread"}, "", r), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.g.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return r
}

func testCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// testLeaf is a server certificate for the names in names, signed by ca.
func testLeaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, names *x509.Certificate) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "replica"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: names.DNSNames, IPAddresses: names.IPAddresses, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
