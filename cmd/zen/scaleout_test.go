package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// Scale out (issue 17): two replicas of memory, router and executor, each
// its own process, the local cluster's layout (scripts/cluster.sh with
// ZEN_REPLICAS_*=2: every role dials its peers as one list of addresses),
// Redis behind memory, and a steady load of continued conversations over
// two edges. Each replica's calls are counted from its own /metrics.
//
// Set ZEN_SCALE_REPORT=1 to print the table docs/RELIABILITY.md quotes.

const (
	scaleClients = 8
	// steadyFor is how long the shares are counted over.
	steadyFor = 8 * time.Second
	// joinBound is how soon a replica started under load must get calls:
	// callers redial a replica they cannot reach at least once a second
	// (serve.Dial's backoff), and balance over it once connected.
	// Measured: about 1 s.
	joinBound = 5 * time.Second
	// killSlack is how long after a SIGKILL a call may still be sent to the
	// dead replica: until its callers hear the connection close.
	killSlack = time.Second
	// afterKill is how long the load runs on after each kill.
	afterKill = 3 * time.Second
	// shareLow and shareHigh bound each replica's share of its role's calls.
	shareLow, shareHigh = 0.35, 0.65
)

// gRPC services, whose calls /metrics counts by method.
var roleServices = map[string]string{
	"memory": "zen.memory.v1.MemoryService", "router": "zen.router.v1.RouterService",
	"executor": "zen.executor.v1.ExecutorService",
}

// member is one replica of a role.
type member struct {
	role, name string
	p          *proc
}

// calls is how many calls of its role's service the replica has finished,
// from its Prometheus metrics (otelgrpc's rpc.server.call.duration).
func (m *member) calls(t *testing.T) int {
	t.Helper()
	res, err := http.Get("http://" + m.p.addr("metrics") + "/metrics")
	if err != nil {
		t.Fatalf("%s's metrics: %v", m.name, err)
	}
	defer res.Body.Close()
	n := 0
	prefix := `rpc_method="` + roleServices[m.role] + "/"
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rpc_server_call_duration_seconds_count{") || !strings.Contains(line, prefix) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("%s's metrics: %q: %v", m.name, line, err)
		}
		n += int(v)
	}
	return n
}

// scaleRig is the cluster under test.
type scaleRig struct {
	t        *testing.T
	env      map[string]string
	members  []*member
	edgeURLs []string
	gateway  string
	lists    map[string]string // role → the addresses its callers dial
}

// startReplica starts one replica of role on addr (127.0.0.1:0 for any).
func (r *scaleRig) startReplica(role, name, addr string) *member {
	env := mergeEnv(r.env, map[string]string{"ZEN_GRPC_ADDR": addr, "ZEN_METRICS_ADDR": "127.0.0.1:0",
		"ZEN_ROUTER_ADDR": r.lists["router"]})
	m := &member{role: role, name: name, p: startZen(r.t, env, []string{"grpc", "metrics"}, role)}
	r.members = append(r.members, m)
	return m
}

func (r *scaleRig) member(name string) *member {
	for _, m := range r.members {
		if m.name == name {
			return m
		}
	}
	r.t.Fatalf("no member %s", name)
	return nil
}

// counts is every member's calls now.
func (r *scaleRig) counts() map[string]int {
	c := map[string]int{}
	for _, m := range r.members {
		if m.p.cmd.ProcessState == nil {
			c[m.name] = m.calls(r.t)
		}
	}
	return c
}

// reservePort finds a loopback port free now, for a replica started later,
// below the kernel's ephemeral range: a port from that range (what a
// listener on port 0 gets) may meanwhile become the local end of any
// outgoing connection, and the load's clients open many, so the replica's
// listen failed now and then with "address already in use".
func reservePort(t *testing.T) string {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		addr := "127.0.0.1:" + strconv.Itoa(reservedPortsFrom+rand.N(low-reservedPortsFrom))
		if l, err := net.Listen("tcp", addr); err == nil {
			l.Close()
			return addr
		}
	}
	t.Fatalf("no free loopback port in %d–%d", reservedPortsFrom, low-1)
	return ""
}

// reservedPortsFrom is the lowest port reservePort gives: above the ports
// services commonly take.
const reservedPortsFrom = 20000

// ephemeralLow is the first port of the kernel's ephemeral range, or
// Linux's default when it cannot be read.
func ephemeralLow() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if low, err := strconv.Atoi(f[0]); err == nil && low > reservedPortsFrom {
				return low
			}
		}
	}
	return 32768
}

func TestAReservedPortIsOutsideTheEphemeralRange(t *testing.T) {
	t.Parallel()
	low := ephemeralLow()
	for range 20 {
		addr := reservePort(t)
		_, port, _ := net.SplitHostPort(addr)
		if p, _ := strconv.Atoi(port); p < reservedPortsFrom || p >= low {
			t.Fatalf("reserved %s, outside %d–%d", addr, reservedPortsFrom, low-1)
		}
	}
}

// startScaleRig starts two memories, two routers and two executors (and
// names a third executor's address, which starts later), two edges and a
// gateway; every caller dials each role as a list.
func startScaleRig(t *testing.T, fake *fakemodel.Server, lateExecutor string) *scaleRig {
	rds := redistest.Start(t)
	r := &scaleRig{t: t, lists: map[string]string{}, env: mergeEnv(fakeEnv(fake), map[string]string{
		"ZEN_SERVICE_TOKEN": "scale-service-token-0123456789abcdef", "ZEN_MEMORY_STORE": "redis",
		"REDIS_URL": rds.URL(),
	})}
	for _, role := range []string{"memory", "router", "executor"} {
		var addrs []string
		for i := range 2 {
			m := r.startReplica(role, fmt.Sprintf("%s-%d", role, i+1), "127.0.0.1:0")
			addrs = append(addrs, m.p.addr("grpc"))
		}
		if role == "executor" {
			addrs = append(addrs, lateExecutor)
		}
		r.lists[role] = strings.Join(addrs, ",")
	}
	callers := mergeEnv(r.env, map[string]string{"ZEN_MEMORY_ADDR": r.lists["memory"],
		"ZEN_ROUTER_ADDR": r.lists["router"], "ZEN_EXECUTOR_ADDR": r.lists["executor"]})
	for range 2 {
		e := startZen(t, callers, []string{"mcp"}, "edge", "--mcp-addr", "127.0.0.1:0")
		r.edgeURLs = append(r.edgeURLs, "http://"+e.addr("mcp")+"/mcp")
	}
	gw := startZen(t, callers, []string{"gateway"}, "gateway", "--http-addr", "127.0.0.1:0")
	r.gateway = "http://" + gw.addr("gateway")
	return r
}

// kill9 ends a replica as a crash would, and says when.
func (r *scaleRig) kill9(m *member) time.Time {
	at := time.Now()
	if err := m.p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		r.t.Fatal(err)
	}
	recv(r.t, "a killed "+m.name+" to exit", m.p.done)
	return at
}

// kill is one SIGKILL and when it happened.
type kill struct {
	name string
	at   time.Time
}

// TestScaleOut: under a steady load every replica serves its share of its
// role's calls, a replica started under load gets calls within joinBound,
// and a replica killed with SIGKILL costs no acknowledged turn while
// clients see at most the calls in flight on it fail, each with a message
// naming the role.
func TestScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and ten zen processes, and runs a load for about 25 s")
	}
	fake := fakemodel.New(t)
	fake.SetReply(answerMarker)
	lateAddr := reservePort(t)
	r := startScaleRig(t, fake, lateAddr)
	ld := newLoad(r.edgeURLs, t.TempDir())
	ld.start(scaleClients)
	if !pollUntil(30*time.Second, func() bool { return ld.recovered(scaleClients, time.Time{}) }) {
		ld.halt()
		t.Fatalf("not every client got an answer:\n%v", ld.outcomes())
	}

	// Shares, over a window of steady load.
	before := r.counts()
	hold(steadyFor)
	after := r.counts()
	steady := map[string]int{}
	for name, n := range after {
		steady[name] = n - before[name]
	}

	// A third executor, started under load, at an address its callers
	// already list.
	late := r.startReplica("executor", "executor-3", lateAddr)
	up := time.Now()
	joined := pollUntil(joinBound, func() bool { return late.calls(t) > 0 })
	joinedAfter := time.Since(up)

	// One replica of each role killed under load, each while its calls are
	// in flight.
	var kills []kill
	for _, name := range []string{"executor-1", "router-2", "memory-2"} {
		kills = append(kills, kill{name, r.kill9(r.member(name))})
		hold(afterKill)
	}
	ld.halt()
	results := ld.outcomes()
	kept := readKept(t, r.gateway, results)

	report := scaleReport(steady, joinedAfter, joined, kills, results, kept)
	if os.Getenv("ZEN_SCALE_REPORT") == "1" {
		fmt.Println(report.table)
	} else {
		t.Log("\n" + report.table)
	}
	checkShares(t, steady)
	if !joined {
		t.Errorf("executor-3, started under load, got no call within %s", joinBound)
	}
	if report.lost > 0 || report.dups > 0 {
		t.Errorf("acknowledged turns lost: %d (%v); exchanges stored twice: %d (%v)", report.lost, report.lostEg,
			report.dups, report.dupEg)
	}
	for _, f := range report.unexplained {
		t.Errorf("a failure no kill explains: %s", f)
	}
	for _, k := range report.kills {
		switch {
		case k.role == "memory" && k.failed > 0:
			// Memory's calls are unary and retried, or saved again under
			// their exchange id: a lost replica costs nothing.
			t.Errorf("killing %s failed %d calls: %v", k.name, k.failed, k.messages)
		case k.failed > k.inFlight:
			// Only calls streaming on the killed replica may fail: calls
			// sent after it died go to the others.
			t.Errorf("killing %s failed %d calls, though only %d were in flight on every replica together: %v",
				k.name, k.failed, k.inFlight, k.messages)
		}
	}
}

// checkShares: each replica served between shareLow and shareHigh of its
// role's calls, out of enough calls to tell.
func checkShares(t *testing.T, steady map[string]int) {
	t.Helper()
	for role := range roleServices {
		a, b := steady[role+"-1"], steady[role+"-2"]
		if a+b < 50 {
			t.Errorf("%s served %d calls in %s: too few to measure shares", role, a+b, steadyFor)
			continue
		}
		for _, n := range []int{a, b} {
			if share := float64(n) / float64(a+b); share < shareLow || share > shareHigh {
				t.Errorf("%s's replicas served %d and %d calls: each should serve %.0f%%–%.0f%%", role, a, b,
					100*shareLow, 100*shareHigh)
				break
			}
		}
	}
}
