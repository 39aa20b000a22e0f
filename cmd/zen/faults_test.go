package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// Faults between roles (issue 12, item 11): each role its own process, a
// real redis-server with AOF, fault proxies on the wires between them, and
// a steady load of conversations while each fault comes and goes.
//
//	edges ──toMemory──► memory ──toRedis──► redis-server
//	      ──toExecutor─► executor ──► router
//	      ──────────────► router
//
// Set ZEN_FAULT_REPORT=1 for longer faults and the table docs/RELIABILITY.md
// quotes, printed on stdout.

const (
	faultClients = 8
	// modelDelay keeps each call at the model for a while, so a cut
	// connection finds calls in flight.
	modelDelay = 40 * time.Millisecond
	// recoveryBound is how soon after a fault ends every client must have
	// an answer kept again: a restarted role's start-up plus the roles'
	// reconnect backoff (at most 1 s, serve.Dial), with room for a loaded
	// machine. Measured: about 1 s (docs/RELIABILITY.md).
	recoveryBound = 15 * time.Second
)

// spans are how long faults last: a fault on the wire for faultFor, a
// killed process down for downFor before it restarts.
type spans struct{ faultFor, downFor time.Duration }

func faultSpans(report bool) spans {
	if report {
		return spans{faultFor: 15 * time.Second, downFor: 10 * time.Second}
	}
	return spans{faultFor: 4 * time.Second, downFor: 2 * time.Second}
}

// rig is the cluster under test, with its proxies.
type rig struct {
	t                             *testing.T
	rds                           *redistest.Server
	toRedis, toMemory, toExecutor *faultProxy
	memEnv, edgeEnv               map[string]string
	mem                           *proc
	edges                         []*proc
	edgeAddrs                     []string
	gateway                       string
	cuts                          int // connections the cut faults closed
}

func startRig(t *testing.T, fake *fakemodel.Server) *rig {
	r := &rig{t: t, rds: redistest.Start(t)}
	grpcOnly := []string{"grpc"}
	env := fakeEnv(fake)
	r.toRedis = startProxy(t, r.rds.Addr)
	r.memEnv = mergeEnv(env, map[string]string{"ZEN_MEMORY_STORE": "redis", "ZEN_GRPC_ADDR": "127.0.0.1:0",
		"REDIS_URL": "redis://" + r.toRedis.Addr() + "/0"})
	r.mem = startZen(t, r.memEnv, grpcOnly, "memory")
	r.memEnv["ZEN_GRPC_ADDR"] = r.mem.addr("grpc") // a restart comes back where the proxy points
	rt := startZen(t, mergeEnv(env, map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), grpcOnly, "router")
	ex := startZen(t, mergeEnv(env, map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0", "ZEN_ROUTER_ADDR": rt.addr("grpc")}),
		grpcOnly, "executor")
	r.toMemory = startProxy(t, r.mem.addr("grpc"))
	r.toExecutor = startProxy(t, ex.addr("grpc"))
	r.edgeEnv = mergeEnv(env, map[string]string{"ZEN_MEMORY_ADDR": r.toMemory.Addr(), "ZEN_ROUTER_ADDR": rt.addr("grpc"),
		"ZEN_EXECUTOR_ADDR": r.toExecutor.Addr()})
	for range 2 {
		e := startZen(t, r.edgeEnv, []string{"mcp"}, "edge", "--mcp-addr", "127.0.0.1:0")
		r.edges = append(r.edges, e)
		r.edgeAddrs = append(r.edgeAddrs, e.addr("mcp"))
	}
	// The gateway reads threads straight from memory, past every fault.
	gw := startZen(t, mergeEnv(env, map[string]string{"ZEN_MEMORY_ADDR": r.mem.addr("grpc"),
		"ZEN_ROUTER_ADDR": rt.addr("grpc"), "ZEN_EXECUTOR_ADDR": ex.addr("grpc")}), []string{"gateway"},
		"gateway", "--http-addr", "127.0.0.1:0")
	r.gateway = "http://" + gw.addr("gateway")
	return r
}

func (r *rig) edgeURLs() []string {
	urls := make([]string, len(r.edgeAddrs))
	for i, a := range r.edgeAddrs {
		urls[i] = "http://" + a + "/mcp"
	}
	return urls
}

// kill9 ends p as a crash would.
func (r *rig) kill9(p *proc) {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		r.t.Fatal(err)
	}
	recv(r.t, "a killed zen to exit", p.done)
}

// cutEvery cuts every connection through p once a second for d.
func (r *rig) cutEvery(p *faultProxy, d time.Duration) {
	for range int(d / time.Second) {
		hold(time.Second)
		r.cuts += p.CutAll()
	}
}

// fault is one fault: inject returns once it is over.
type fault struct {
	name   string
	inject func()
}

// hold lets a fault last for d while the load runs on: the length of the
// fault, not a wait for something to happen.
func hold(d time.Duration) { <-time.After(d) }

func (r *rig) faults(s spans) []fault {
	t := r.t
	return []fault{
		{"none (baseline)", func() { hold(s.faultFor) }},
		{"latency edge→memory, +100 ms each way", func() {
			r.toMemory.SetLatency(100 * time.Millisecond)
			hold(s.faultFor)
			r.toMemory.SetLatency(0)
		}},
		{"cut edge→executor mid-call, every 1 s", func() { r.cutEvery(r.toExecutor, s.faultFor) }},
		// The latency keeps memory's replies on the wire a while, so a cut
		// often lands after an append was stored and before the edge heard:
		// the edge retries it, and the exchange must still be kept once.
		{"cut edge→memory mid-call, every 1 s, +50 ms each way", func() {
			r.toMemory.SetLatency(50 * time.Millisecond)
			r.cutEvery(r.toMemory, s.faultFor)
			r.toMemory.SetLatency(0)
		}},
		{"black hole edge→memory", func() {
			r.toMemory.BlackHole()
			hold(s.faultFor)
			r.toMemory.Heal()
		}},
		{"slow Redis: +20 ms each way, 64 KB/s", func() {
			r.toRedis.SetLatency(20 * time.Millisecond)
			r.toRedis.SetRate(64 << 10)
			hold(s.faultFor)
			r.toRedis.SetLatency(0)
			r.toRedis.SetRate(0)
		}},
		{"kill -9 memory, restart", func() {
			r.kill9(r.mem)
			hold(s.downFor)
			r.mem = startZen(t, r.memEnv, []string{"grpc"}, "memory")
		}},
		{"kill -9 Redis (AOF), restart", func() {
			r.rds.Stop()
			hold(s.downFor)
			r.rds.Restart(t)
		}},
		// Last: the one fault whose clients may lose their edge. Every
		// other fault must be answered by zen itself.
		{"kill -9 edge-1, restart", func() {
			r.kill9(r.edges[0])
			hold(s.downFor)
			r.edges[0] = startZen(t, r.edgeEnv, []string{"mcp"}, "edge", "--mcp-addr", r.edgeAddrs[0])
		}},
	}
}

// phaseRun is when a fault ran.
type phaseRun struct {
	name        string
	start, over time.Time // began; fault over
}

// TestFaultsBetweenRoles puts each fault on the cluster under load and
// checks what the clients saw and what the threads hold afterwards: no
// acknowledged turn lost, no exchange stored twice, every error naming the
// part of zen that failed, and every client answered again soon after the
// fault ends.
func TestFaultsBetweenRoles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and six zen processes, and runs for about 35 s")
	}
	report := os.Getenv("ZEN_FAULT_REPORT") == "1"
	s := faultSpans(report)
	fake := fakemodel.New(t)
	fake.SetReply(answerMarker)
	r := startRig(t, fake)
	ld := newLoad(r.edgeURLs(), t.TempDir())
	ld.start(faultClients)
	if !pollUntil(30*time.Second, func() bool { return ld.recovered(faultClients, time.Time{}) }) {
		ld.halt()
		t.Fatalf("not every client got an answer before any fault:\n%v", ld.outcomes())
	}
	var runs []phaseRun
	for _, f := range r.faults(s) {
		run := phaseRun{name: f.name, start: time.Now()}
		cuts := r.cuts
		f.inject()
		run.over = time.Now()
		if r.cuts > cuts {
			run.name += fmt.Sprintf(" (%d connections cut)", r.cuts-cuts)
		}
		// The next fault starts once every client is answered again, so
		// each fault meets a cluster that had recovered from the last.
		pollUntil(2*recoveryBound, func() bool { return ld.recovered(faultClients, run.over) })
		runs = append(runs, run)
	}
	ld.halt()
	results := ld.outcomes()
	for i, o := range results {
		// A call counts under the fault it ended in: where its error, if
		// any, came from. Calls before the first fault are the baseline's.
		for p, run := range runs {
			if !o.end.Before(run.start) {
				results[i].phase = p
			}
		}
	}
	kept := readKept(t, r.gateway, results)
	rows := tabulate(runs, results, kept)
	table := renderTable(rows, s)
	if report {
		fmt.Println(table)
	} else {
		t.Log("\n" + table)
	}
	checkFaults(t, rows, results)
}

// pollUntil polls cond until it holds or within passes, and says which.
func pollUntil(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// componentRE finds the part of zen (or of its surroundings) a message
// blames.
var componentRE = regexp.MustCompile(`(?i)\b(memory|router|executor|edge|gateway|redis|provider)\b`)

// verdict is what issue 12 asks of each fault; every field's zero value
// but Recovered's is the target.
type verdict struct {
	AckedTurnsLost      int  // answered and kept, by zen's word, yet not in the thread
	AnsweredNotSaved    int  // answers thrown away: each fault is over within the edge's 30 s save window
	DuplicatedExchanges int  // stored twice in one thread
	UnnamedErrors       int  // errors from zen that name no component
	NoAnswer            int  // calls zen never answered
	EdgeLost            int  // calls that lost their edge, though none was harmed
	BaselineErrors      int  // any error with no fault on
	Recovered           bool // every client answered again within recoveryBound of the fault's end
}

// checkFaults compares each fault's verdict with the target, and lists
// examples of what went wrong.
func checkFaults(t *testing.T, rows []faultRow, results []outcome) {
	t.Helper()
	want, got := map[string]verdict{}, map[string]verdict{}
	var examples []string
	for _, row := range rows {
		want[row.name] = verdict{Recovered: true}
		got[row.name] = verdict{AckedTurnsLost: row.lost, AnsweredNotSaved: row.notSaved, DuplicatedExchanges: row.dups,
			Recovered: row.allOK >= 0 && row.allOK <= recoveryBound}
		if row.lost+row.dups > 0 {
			examples = append(examples, fmt.Sprintf("%s: lost %v, duplicated %v", row.name, row.lostEg, row.dupEg))
		}
	}
	for _, o := range results {
		row := rows[o.phase]
		v := got[row.name]
		switch {
		case o.kind == kindNoAnswer:
			v.NoAnswer++
		case o.kind == kindEdgeLost && o.phase != len(rows)-1: // the edge is killed last
			v.EdgeLost++
			examples = append(examples, fmt.Sprintf("%s: %s lost its edge: %s", row.name, o.marker, o.detail))
		case (o.kind == kindZenError || o.kind == kindNotSaved) && !componentRE.MatchString(o.msg):
			v.UnnamedErrors++
			examples = append(examples, fmt.Sprintf("%s: %s was told %q", row.name, o.marker, o.msg))
		}
		if o.phase == 0 && o.kind != kindOK && o.kind != kindNotSaved {
			v.BaselineErrors++
		}
		got[row.name] = v
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("faults between roles (-want +got):\n%s\n%s", diff, strings.Join(examples[:min(len(examples), 20)], "\n"))
	}
}
