package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
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
func startServeSQLite(b *testing.B) *benchStack { return startServeSQLiteOf(b, zenBin) }

// startServeSQLiteOf is startServeSQLite with the zen binary bin.
func startServeSQLiteOf(b *testing.B, bin string) *benchStack {
	fake := fakemodel.New(b)
	env, spans := withSpans(b, mergeEnv(benchEnv(fake), map[string]string{"ZEN_DATA_DIR": b.TempDir(),
		"ZEN_PPROF_ADDR": "127.0.0.1:0", "ZEN_MEMORY_STORE": *serveStore}))
	p := startBinIn(b, bin, b.TempDir(), env, []string{"mcp", "pprof"}, serveArgs()...)
	st := &benchStack{mcpURL: "http://" + p.addr("mcp") + "/mcp", zenPIDs: []int{p.cmd.Process.Pid}, fake: fake,
		pprofs: []pprofListener{{"serve", p.addr("pprof")}}, wd: b.TempDir(), spans: spans}
	st.connect(b)
	return st
}

// startClusterRedis runs the local cluster's layout: memory, router,
// executor and edge, each its own zen process, joined by gRPC on loopback
// with a service token, threads in a real redis-server persisting as make
// cluster's does (an append-only file fsynced every second).
func startClusterRedis(b *testing.B) *benchStack {
	fake := fakemodel.New(b)
	rds := redistest.StartWith(b, "--save", "", "--appendonly", "yes")
	env, spans := withSpans(b, mergeEnv(benchEnv(fake), map[string]string{
		"ZEN_SERVICE_TOKEN": "bench-service-token-0123456789abcdef", "ZEN_MEMORY_STORE": "redis",
		"REDIS_URL": rds.URL(),
	}))
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
	st := &benchStack{mcpURL: "http://" + edge.addr("mcp") + "/mcp", fake: fake, wd: b.TempDir(),
		redisPID: findPID(b, "redis-server", rds.Addr), spans: spans}
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

// fakeTimes is the fake's own time for the requests zen sends it now: the
// median of the last one sent straight to it, one at a time, its streamed
// reply read to the end. here is from this process, which holds the fake:
// nothing wakes another process, as zen's router must, or any client of a
// real provider. apart is from a process of its own (internal/fakeprobe),
// as a client elsewhere finds the fake.
type fakeTimes struct{ here, apart time.Duration }

// fakeOwn is the fake's own time, here and apart. It checks the request
// streamed and, when the calls continue threads of history turns, carried
// the history (the first prompt of every grown thread).
func (st *benchStack) fakeOwn(b *testing.B, history int) fakeTimes {
	reqs := st.fake.Requests()
	last := reqs[len(reqs)-1]
	if !last.Stream {
		b.Fatal("zen asked the fake for a reply that does not stream")
	}
	if history > 0 && !strings.Contains(last.AllText(), "Turn 1 of a conversation") {
		b.Fatalf("the model was not sent the thread's history:\n%s", last.AllText())
	}
	url := strings.TrimSuffix(st.fake.URL(), "/v1") + last.Path
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	var lat []time.Duration
	for range 300 {
		t0 := time.Now()
		resp, err := hc.Post(url, "application/json", bytes.NewReader(last.Body))
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("data: [DONE]")) {
			b.Fatalf("straight to the fake: %d %v %s", resp.StatusCode, err, body)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	return fakeTimes{here: lat[len(lat)/2], apart: probeFake(b, url, last.Body)}
}

// probeFake is fakeprobe's median for body posted to url.
func probeFake(b *testing.B, url string, body []byte) time.Duration {
	file := filepath.Join(b.TempDir(), "request.json")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(fakeProbe(b), url, file).Output()
	if err != nil {
		b.Fatalf("fakeprobe: %v\n%s", err, exitStderr(err))
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		b.Fatalf("fakeprobe printed %q, not nanoseconds", out)
	}
	return time.Duration(ns)
}

// fakeProbeBin is internal/fakeprobe, built beside zenBin on first use.
var fakeProbeBin = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(zenBin), "fakeprobe")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/fakeprobe").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build fakeprobe: %v\n%s", err, out)
	}
	return bin, nil
})

func fakeProbe(b *testing.B) string {
	bin, err := fakeProbeBin()
	if err != nil {
		b.Fatal(err)
	}
	return bin
}

// exitStderr is what a command that failed said on stderr.
func exitStderr(err error) []byte {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.Stderr
	}
	return nil
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
