package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// benchEnv is what both layouts of BenchmarkContinuedChat share: the fake
// as the Custom provider, and a turn limit above the longest thread
// measured (54 turns, plus the call's own two).
func benchEnv(fake *fakemodel.Server) map[string]string {
	return mergeEnv(fakeEnv(fake), map[string]string{"MAX_CONVERSATION_TURNS": "100"})
}

// startServeSQLite runs zen serve, its own process, with its default
// SQLite store in a temporary data directory (or -zen.serve-store's).
func startServeSQLite(b *testing.B) *benchStack {
	env, spans := withSpans(b)
	st := startServeSQLiteOf(b, zenBin, env)
	st.spans = spans
	return st
}

// startServeSQLiteOf is startServeSQLite with the zen binary bin and the
// variables extra added to its environment.
func startServeSQLiteOf(b *testing.B, bin string, extra map[string]string) *benchStack {
	fake := fakemodel.New(b)
	env := mergeEnv(mergeEnv(benchEnv(fake), map[string]string{
		"ZEN_DATA_DIR":     b.TempDir(),
		"ZEN_PPROF_ADDR":   "127.0.0.1:0",
		"ZEN_MEMORY_STORE": *serveStore,
	}), mergeEnv(procsEnv(*serveProcs), extra))
	p := startBinIn(b, bin, b.TempDir(), env, []string{"mcp", "pprof"}, serveArgs()...)
	st := &benchStack{
		mcpURL:  "http://" + p.addr("mcp") + "/mcp",
		zenPIDs: []int{p.cmd.Process.Pid},
		fake:    fake,
		pprofs:  []pprofListener{{"serve", p.addr("pprof")}},
		wd:      b.TempDir(),
	}
	st.connect(b)
	return st
}

// clusterProcesses is how many zen processes startClusterRedis runs.
const clusterProcesses = 4

// startClusterRedis runs the local cluster's layout: memory, router,
// executor and edge, each its own zen process, joined by gRPC on loopback
// with a service token, threads in a real redis-server persisting as make
// cluster's does (an append-only file fsynced every second), each with the
// GOMAXPROCS -zen.cluster-gomaxprocs gives, by default its share of the
// cores, as make cluster's have.
func startClusterRedis(b *testing.B) *benchStack {
	fake := fakemodel.New(b)
	rds := redistest.StartWith(b, "--save", "", "--appendonly", "yes")
	spansEnv, spans := withSpans(b)
	env := mergeEnv(mergeEnv(benchEnv(fake), map[string]string{
		"ZEN_SERVICE_TOKEN": "bench-service-token-0123456789abcdef",
		"ZEN_MEMORY_STORE":  "redis",
		"REDIS_URL":         rds.URL(),
	}), mergeEnv(procsEnv(*clusterProcs), spansEnv))
	// Each role serves pprof, for its allocation totals.
	env["ZEN_PPROF_ADDR"] = "127.0.0.1:0"
	role := func(name string, addrs map[string]string) *proc {
		return startZen(b, mergeEnv(mergeEnv(env, addrs), map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}),
			[]string{"grpc", "pprof"}, name)
	}
	memory := role("memory", nil)
	router := role("router", nil)
	executor := role("executor", map[string]string{"ZEN_ROUTER_ADDR": router.addr("grpc")})
	edge := startZen(b, mergeEnv(env, map[string]string{
		"ZEN_MEMORY_ADDR":   memory.addr("grpc"),
		"ZEN_ROUTER_ADDR":   router.addr("grpc"),
		"ZEN_EXECUTOR_ADDR": executor.addr("grpc"),
	}), []string{"mcp", "pprof"}, "edge", "--mcp-addr", "127.0.0.1:0")
	st := &benchStack{
		mcpURL:   "http://" + edge.addr("mcp") + "/mcp",
		fake:     fake,
		wd:       b.TempDir(),
		redisPID: findPID(b, "redis-server", rds.Addr),
		spans:    spans,
	}
	for role, p := range map[string]*proc{"memory": memory, "router": router, "executor": executor, "edge": edge} {
		st.zenPIDs = append(st.zenPIDs, p.cmd.Process.Pid)
		st.pprofs = append(st.pprofs, pprofListener{role, p.addr("pprof")})
	}
	st.connect(b)
	return st
}

// startSDKFloor runs internal/sdkfloor, built from this tree, against
// the fake, with the collector as zen sets it and chat's input schema as
// zen serves it (the SDK reads the schema on every call).
func startSDKFloor(b *testing.B) *benchStack {
	fake := fakemodel.New(b)
	bin := filepath.Join(b.TempDir(), "sdkfloor")
	build := exec.Command("go", "build", "-o", bin, "./internal/sdkfloor")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build sdkfloor: %v\n%s", err, out)
	}
	golden, err := os.ReadFile("../../services/executor/internal/tools/testdata/schemas/chat.json")
	if err != nil {
		b.Fatal(err)
	}
	var chat struct {
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(golden, &chat); err != nil || len(chat.InputSchema) == 0 {
		b.Fatalf("chat's golden schema has no input_schema (%v)", err)
	}
	env := mergeEnv(fakeEnv(fake), map[string]string{
		"GOGC":                  strconv.Itoa(gcPercent),
		"SDKFLOOR_INPUT_SCHEMA": string(chat.InputSchema),
	})
	p := startBinIn(b, bin, b.TempDir(), env, []string{"mcp"})
	st := &benchStack{
		mcpURL:  "http://" + p.addr("mcp") + "/mcp",
		zenPIDs: []int{p.cmd.Process.Pid},
		fake:    fake,
		wd:      b.TempDir(),
	}
	st.connect(b)
	return st
}

// clockTicks is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// Linux for every architecture zen builds for).
const clockTicks = 100

// procCPU is the CPU time a process has used, its threads' included:
// utime plus stime from /proc/<pid>/stat.
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name, in parentheses, may hold spaces; fields after it
	// start with the state, the 3rd: utime and stime are the 14th and 15th.
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// sysCalls counts a process's read and write system calls.
type sysCalls struct{ reads, writes int64 }

// procSysCalls reads them from /proc/<pid>/io (syscr, syscw).
func procSysCalls(b *testing.B, pid int) sysCalls {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		b.Fatal(err)
	}
	c := sysCalls{reads: -1, writes: -1}
	for line := range strings.Lines(string(raw)) {
		name, value, _ := strings.Cut(strings.TrimSpace(line), ": ")
		n, err := strconv.ParseInt(value, 10, 64)
		switch {
		case name != "syscr" && name != "syscw":
			continue
		case err != nil:
			b.Fatalf("/proc/%d/io: %s: %v", pid, line, err)
		case name == "syscr":
			c.reads = n
		default:
			c.writes = n
		}
	}
	if c.reads < 0 || c.writes < 0 {
		b.Fatalf("/proc/%d/io names no syscr or syscw:\n%s", pid, raw)
	}
	return c
}

// machineBusy is the time every CPU of the machine has been busy: the
// first line of /proc/stat, all but idle and iowait (guest time is counted
// in user time already).
func machineBusy(b *testing.B) time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	fields := strings.Fields(string(line))[1:] // user nice system idle iowait irq softirq steal ...
	var ticks int64
	for i, f := range fields[:8] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			b.Fatalf("/proc/stat: %v", err)
		}
		if i != 3 && i != 4 {
			ticks += n
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// findPID finds the process whose command line holds both words: here,
// redis-server, which names its address in its title.
func findPID(b *testing.B, name, addr string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		line, err := os.ReadFile(d)
		if err != nil || !bytes.Contains(line, []byte(name)) || !bytes.Contains(line, []byte(addr)) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err == nil {
			return pid
		}
	}
	b.Fatalf("no process %s on %s", name, addr)
	return 0
}
