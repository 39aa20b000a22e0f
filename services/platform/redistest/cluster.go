package redistest

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// clusterSlots is how many hash slots a Redis Cluster shares out.
const clusterSlots = 16384

// StartCluster runs masters redis-servers, each with flags, as one Redis
// Cluster without replicas, the slots shared out evenly, and returns the
// REDIS_URL zen takes for it (cluster=true, every node an addr). It waits
// until every node sees the cluster whole and serving.
func StartCluster(tb testing.TB, masters int, flags ...string) (string, []*Server) {
	tb.Helper()
	nodes := make([]*Server, masters)
	buses := make([]int, masters)
	for i := range nodes {
		// A bus port of its own: Redis's default, the port plus 10,000,
		// refuses the upper fifth of the ports freePort may give.
		bus, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		buses[i] = bus
		nodes[i] = StartWith(tb, append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "5000", "--cluster-port", fmt.Sprint(bus)}, flags...)...)
	}
	for i, n := range nodes {
		first, last := i*clusterSlots/masters, (i+1)*clusterSlots/masters-1
		n.cli(tb, "CLUSTER", "ADDSLOTSRANGE", fmt.Sprint(first), fmt.Sprint(last))
		if i > 0 {
			host, port, _ := strings.Cut(n.Addr, ":")
			nodes[0].cli(tb, "CLUSTER", "MEET", host, port, fmt.Sprint(buses[i]))
		}
	}
	want := fmt.Sprintf("cluster_known_nodes:%d", masters)
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for _, n := range nodes {
		for info := n.cli(tb, "CLUSTER", "INFO"); !strings.Contains(info, "cluster_state:ok") ||
			!strings.Contains(info, want); info = n.cli(tb, "CLUSTER", "INFO") {
			select {
			case <-deadline.C:
				tb.Fatalf("the Redis Cluster did not come up in 30 s; %s says:\n%s", n.Addr, info)
			case <-tick.C:
			}
		}
	}
	url := "redis://" + nodes[0].Addr + "?cluster=true"
	for _, n := range nodes[1:] {
		url += "&addr=" + n.Addr
	}
	return url, nodes
}

// cli runs one command on the server with redis-cli and returns its answer.
func (s *Server) cli(tb testing.TB, args ...string) string {
	tb.Helper()
	host, port, _ := strings.Cut(s.Addr, ":")
	out, err := exec.Command("redis-cli", append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	if err != nil || strings.HasPrefix(string(out), "ERR") {
		tb.Fatalf("redis-cli %s on %s: %v\n%s", strings.Join(args, " "), s.Addr, err, out)
	}
	return string(out)
}
