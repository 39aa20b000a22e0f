package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestLocalClusterReplicas is make cluster with ZEN_REPLICAS_*: two
// memories and two executors, each on its own port, and the roles that
// call them dial both; with the first replica of each killed, calls go on
// through the second.
func TestLocalClusterReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and nine processes")
	}
	fake := fakemodel.New(t)
	dir := t.TempDir()
	c := &cluster{t: t, base: freeBase(t)} // the extra replicas' ports free too
	c.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + zenHome, "ZEN_BIN=" + zenBin, "ZEN_CLUSTER_DIR=" + dir,
		fmt.Sprintf("ZEN_CLUSTER_PORT_BASE=%d", c.base), "CUSTOM_API_URL=" + fake.URL(),
		"ZEN_REPLICAS_MEMORY=2", "ZEN_REPLICAS_EXECUTOR=2", "GOMAXPROCS=3"}
	t.Cleanup(func() { c.run("down") })
	up := c.run("up")
	for _, want := range []string{
		fmt.Sprintf("memory-2 ready on %s", c.addr(12)), fmt.Sprintf("executor-2 ready on %s", c.addr(32)),
		fmt.Sprintf("executor %s,%s", c.addr(3), c.addr(32)),
	} {
		if !strings.Contains(up, want) {
			t.Errorf("cluster.sh up does not say %q:\n%s", want, up)
		}
	}
	if status := c.run("status"); strings.Count(status, "ready") != 9 {
		t.Errorf("status, want nine members ready:\n%s", status)
	}
	for _, name := range []string{"memory-2", "executor", "edge-1"} {
		if got := memberEnv(t, dir, name, "GOMAXPROCS"); got != "3" {
			t.Errorf("%s runs with GOMAXPROCS=%q, want the 3 the cluster was started with", name, got)
		}
	}

	// The first replicas die; the second ones answer.
	for _, name := range []string{"memory", "executor"} {
		if err := syscall.Kill(memberPID(t, dir, name), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	edge := connectHTTP(t, "http://"+c.addr(5)+"/mcp")
	wd := t.TempDir()
	res, got := callTool(t, edge, "chat", map[string]any{"prompt": "FIRST", "model": "llama3.2",
		"working_directory_absolute_path": wd})
	offer, _ := got["continuation_offer"].(map[string]any)
	if res.IsError || offer == nil {
		t.Fatalf("with memory and executor down, their second replicas should answer: %s", text(res))
	}
	res, _ = callTool(t, edge, "chat", map[string]any{"prompt": "SECOND", "continuation_id": offer["continuation_id"],
		"working_directory_absolute_path": wd})
	if res.IsError || !strings.Contains(fake.Requests()[1].AllText(), "FIRST") {
		t.Fatalf("the thread did not continue on the second replicas: %s", text(res))
	}
}
