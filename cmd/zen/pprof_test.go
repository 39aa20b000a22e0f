package main

import (
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// ZEN_PPROF_ADDR serves Go's profiles on a listener of its own; without
// it no role opens one, and a bad value stops the role naming the variable.
func TestPprof(t *testing.T) {
	fake := fakemodel.New(t)
	grpcOnly := map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}
	p := startZen(t, mergeEnv(mergeEnv(fakeEnv(fake), grpcOnly), map[string]string{"ZEN_PPROF_ADDR": "127.0.0.1:0"}),
		[]string{"grpc", "pprof"}, "router")
	base := "http://" + p.addr("pprof") + "/debug/pprof/"

	cmdline := fetchPprof(t, base+"cmdline")
	if want := "router"; !bytes.Contains(cmdline, []byte(want)) {
		t.Errorf("cmdline = %q, want the role's command line (%q)", cmdline, want)
	}
	// A profile is gzipped protobuf; one second keeps the test short.
	if cpu := fetchPprof(t, base+"profile?seconds=1"); !bytes.HasPrefix(cpu, []byte{0x1f, 0x8b}) {
		t.Errorf("CPU profile starts %q, want gzip", cpu[:min(len(cpu), 16)])
	}
	if index := fetchPprof(t, base); !bytes.Contains(index, []byte("goroutine")) {
		t.Errorf("the index lists no goroutine profile:\n%s", index)
	}

	off := startZen(t, mergeEnv(fakeEnv(fake), grpcOnly), []string{"grpc"}, "router")
	if addr := off.addr("pprof"); addr != "" {
		t.Errorf("a role without ZEN_PPROF_ADDR serves pprof on %s", addr)
	}

	bad := exec.Command(zenBin, "router", "--grpc-addr", "127.0.0.1:0")
	bad.Env = baseEnv(t, mergeEnv(fakeEnv(fake), map[string]string{"ZEN_PPROF_ADDR": "six-oh-six-oh"}))
	bad.Dir = t.TempDir()
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), "ZEN_PPROF_ADDR") {
		t.Errorf("bad ZEN_PPROF_ADDR: err %v, output %q; want a failure naming the variable", err, out)
	}
}

func fetchPprof(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", url, res.StatusCode, err, body)
	}
	return body
}
