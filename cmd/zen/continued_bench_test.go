package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/latency"
)

var (
	serveCPUProfile = flag.String("zen.cpuprofile", "", "BenchmarkContinuedChat: write a CPU profile of "+
		"zen serve, taken while the calls are measured, to this file (cluster-redis: of each role, to this "+
		"file's name and .edge, .memory, .router, .executor)")
	serveAllocProfile = flag.String("zen.allocprofile", "", "BenchmarkContinuedChat: write what zen allocates "+
		"while the calls are measured (a heap profile's allocations) to this file, as -zen.cpuprofile does")
	serveTrace = flag.String("zen.trace", "", "BenchmarkContinuedChat: write an execution trace of zen "+
		"(go tool trace) taken while the calls are measured to this file, as -zen.cpuprofile does")
	serveCPUProfileFor = flag.Duration("zen.cpuprofile-for", 10*time.Second,
		"how long -zen.cpuprofile, -zen.allocprofile and -zen.trace profile")
	askProgress = flag.Bool("zen.progress", false, "BenchmarkContinuedChat: every call asks for progress "+
		"(a progress token), as clients that reset their timeout on it do")
	promptBytes = flag.Int("zen.prompt-bytes", 0, "BenchmarkContinuedChat: every prompt padded to about this "+
		"many bytes of prose and code, as agents' prompts are (0: prompts of a few dozen bytes)")
	replyBytes = flag.Int("zen.reply-bytes", 0, "BenchmarkContinuedChat: the model's reply, about this many "+
		"bytes of prose and code streamed word by word (0: \"fake reply\")")
	serveStore = flag.String("zen.serve-store", "sqlite", "BenchmarkContinuedChat: serve-sqlite's "+
		"ZEN_MEMORY_STORE; memory (nothing kept past the process) shows what the SQLite store costs a call")
	clusterProcs = flag.Int("zen.cluster-gomaxprocs", max(1, runtime.NumCPU()/clusterProcesses),
		"BenchmarkContinuedChat: cluster-redis's GOMAXPROCS for each zen process (the default shares the "+
			"cores out between the four, as make cluster shares them; 0 leaves Go's own)")
	serveProcs = flag.Int("zen.serve-gomaxprocs", 0, "BenchmarkContinuedChat and BenchmarkPairedChat: zen "+
		"serve's GOMAXPROCS (0 leaves Go's own)")
)

// procsEnv is the environment that sets GOMAXPROCS to n, or leaves Go's
// own for 0.
func procsEnv(n int) map[string]string {
	if n == 0 {
		return nil
	}
	return map[string]string{"GOMAXPROCS": strconv.Itoa(n)}
}

// filler is what -zen.prompt-bytes and -zen.reply-bytes repeat: prose and
// Go, as a coding agent's prompts and a model's answers mix them.
const filler = "The store appends each exchange in one transaction, so a retry finds it there. " +
	"func (s *Store) Append(ctx context.Context, id string, turns []Turn) (int, error) { return s.write(ctx, id, turns) } "

// sized is text padded with filler to about n bytes, when n is larger.
func sized(text string, n int) string {
	if len(text) >= n {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	for b.Len() < n {
		b.WriteString(" ")
		b.WriteString(filler[:min(len(filler), n-b.Len())])
	}
	return b.String()
}

// BenchmarkContinuedChat measures chat calls that continue a conversation,
// the way agents use zen: on threads of 1, 10 and 50 turns (turns=0 is a
// call that starts one), from 1 and 16 callers (go-sdk clients over
// streamable HTTP, each with connections of its own), in two layouts: zen
// serve with its default SQLite store, and the local cluster's (memory,
// router, executor and edge as separate zen processes, a real
// redis-server). The model is fakemodel, streaming at once. sdk-only is
// the floor beneath both: internal/sdkfloor, a go-sdk server with the
// edge's transport options whose chat tool streams the model's reply and
// answers, keeping nothing.
//
// A call appends two turns, so no thread is measured twice at one length:
// threads are grown by real chat calls, untimed, and each serves the calls
// at N-2w .. N+2w turns, w being N/10 exchanges, then is left. turns=1 is
// a thread of one exchange (2 turns), turns=10 one of 10, turns=50 threads
// of 46 to 54, 50 on average.
//
// Metrics: p50-ms and p99-ms are what zen adds: the call's time minus the
// fake's own p50 (fake-ms: the same streamed request straight to the fake,
// one at a time, from this process). The fake shares this process with the
// clients, so fake-ms never pays for waking another process, which an
// agent calling a provider itself pays, as zen's router does:
// fake-apart-ms is the fake's p50 from a process of its own (a copy of this
// test binary: fakeprobe_test.go), and p50-apart-ms what zen adds over an
// agent that would call the fake itself.
// calls/s is over the measured calls. cpu-ms/call is the
// CPU time (utime+stime in /proc/<pid>/stat) zen's processes spent during
// the measured calls, divided by them; client-cpu-ms/call is this
// process's (clients and fake), redis-cpu-ms/call redis-server's, and
// other-cpu-ms/call the rest of the machine's busy time by /proc/stat:
// near zero, or a little below (its tick sampling misses short bursts),
// unless something else ran and spoiled the figures. syscr/call and
// syscw/call are zen's read and write system calls (sockets and files:
// syscr and syscw in /proc/<pid>/io) per call; like the allocations, they
// hardly move with the machine's speed (a read that finds nothing yet,
// under load, counts too). With -zen.progress
// every call carries a progress token, as from clients that reset their
// timeout on progress. -zen.prompt-bytes and -zen.reply-bytes make the
// turns the size of a coding agent's (prompts and answers of kilobytes).
// -zen.spans prints the median of each span zen's roles made in the
// measured calls: the time of each hop, and of each role's part in it.
//
//	go test -run '^$' -bench ContinuedChat -benchtime 2000x ./cmd/zen
func BenchmarkContinuedChat(b *testing.B) {
	layouts := []struct {
		name  string
		start func(b *testing.B) *benchStack
		turns []int
	}{
		{"serve-sqlite", startServeSQLite, []int{0, 1, 10, 50}},
		{"cluster-redis", startClusterRedis, []int{0, 1, 10, 50}},
		{"sdk-only", startSDKFloor, []int{0}}, // keeps no thread: one length is all of them
	}
	for _, l := range layouts {
		b.Run(l.name, func(b *testing.B) {
			st := l.start(b)
			b.Cleanup(st.printSpans)
			for _, turns := range l.turns {
				b.Run(fmt.Sprint("turns=", turns), func(b *testing.B) {
					for _, callers := range []int{1, 16} {
						b.Run(fmt.Sprint("callers=", callers), func(b *testing.B) { st.measure(b, turns, callers) })
					}
				})
			}
		})
	}
}

// benchStack is a running zen under load: where MCP answers, the processes
// whose CPU counts as zen's, and the fake model.
type benchStack struct {
	mcpURL   string
	zenPIDs  []int
	redisPID int // 0 without Redis
	fake     *fakemodel.Server
	// pprofs are the zen processes' pprof listeners (none for sdk-only).
	pprofs []pprofListener
	// spans hears zen's spans (-zen.spans), and spanTables keeps what
	// they showed for the benchmark's end; nil without it.
	spans      *receiver
	spanTables []string
	wd         string
	sessions   []*mcp.ClientSession
}

// benchSessions is how many sessions prepare threads, whatever the callers.
const benchSessions = 16

func (st *benchStack) connect(b *testing.B) {
	if *replyBytes > 0 {
		reply := sized("Here is what I found.", *replyBytes)
		st.fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: reply} })
	}
	for range benchSessions {
		// A connection pool per caller, as agents in separate processes
		// have; the shared default keeps only two idle connections.
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		transport := &mcp.StreamableClientTransport{Endpoint: st.mcpURL, HTTPClient: hc}
		cs, err := client.Connect(context.Background(), transport, nil)
		if err != nil {
			b.Fatalf("connect: %v", err)
		}
		b.Cleanup(func() { cs.Close() })
		st.sessions = append(st.sessions, cs)
	}
}

// progressTokens numbers the calls that ask for progress, as a client
// numbers its requests.
var progressTokens atomic.Int64

// chat makes one chat call, continuing id unless it is empty, and returns
// the thread's id.
func (st *benchStack) chat(cs *mcp.ClientSession, id, prompt string) (string, error) {
	args := map[string]any{"prompt": prompt, "model": "llama3.2", "working_directory_absolute_path": st.wd}
	if id != "" {
		args["continuation_id"] = id
	}
	params := &mcp.CallToolParams{Name: "chat", Arguments: args}
	if *askProgress {
		params.SetProgressToken(progressTokens.Add(1))
	}
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		return "", err
	}
	offer, _ := decode(res)["continuation_offer"].(map[string]any)
	next, _ := offer["continuation_id"].(string)
	if res.IsError || next == "" {
		return "", fmt.Errorf("chat answered without a continuation: %s", text(res))
	}
	return next, nil
}

// window is how many measured calls one thread serves for turns=N, and the
// turns it holds before the first of them.
func window(turns int) (calls, start int) {
	if turns == 0 {
		return 1, 0 // a new thread each call
	}
	exchanges := max(1, (turns+1)/2) // the thread's exchanges at N turns
	w := exchanges / 10
	return 2*w + 1, 2 * (exchanges - w)
}

// settle is the pause before the timed calls (measure).
const settle = time.Second

// measure runs b.N calls on threads of turns turns from callers sessions
// at once.
func (st *benchStack) measure(b *testing.B, turns, callers int) {
	per, start := window(turns)
	const warm = 2 // threads per caller for untimed calls first
	// Each caller's calls, in order: the thread each continues. A thread
	// serves per calls in a row; the first warm*per are not timed.
	calls := make([][]string, callers)
	var owner []int // the caller of each thread to grow
	for c := range callers {
		n := warm*per + b.N/callers
		if c < b.N%callers {
			n++
		}
		calls[c] = make([]string, 0, n)
		for range (n + per - 1) / per {
			owner = append(owner, c)
		}
	}
	for i, id := range st.grow(b, len(owner), start) {
		c := owner[i]
		for range min(per, cap(calls[c])-len(calls[c])) {
			calls[c] = append(calls[c], id)
		}
	}
	run := func(c int, ids []string, record func(time.Duration)) error {
		for _, id := range ids {
			t0 := time.Now()
			if _, err := st.chat(st.sessions[c], id, sized("and then?", *promptBytes)); err != nil {
				return err
			}
			if record != nil {
				record(time.Since(t0))
			}
		}
		return nil
	}
	st.parallel(b, callers, func(c int) error { return run(c, calls[c][:warm*per], nil) })
	// A pause, as between an agent's turns, so that the calls are timed
	// as zen runs them in their own pattern, not in the one that grew the
	// threads: from 16 sessions at once, which gives zen every core
	// (cores.Governor) until its calls have come one at a time for half a
	// second.
	time.Sleep(settle)
	last := st.lastRequest(b, start)
	fake, fakeApart := st.fakeOwn(b, last), st.fakeApart(b, last)

	var profiles []chan error
	for kind, file := range map[string]string{
		"profile": *serveCPUProfile, "allocs": *serveAllocProfile, "trace": *serveTrace,
	} {
		for _, p := range st.pprofs {
			if file == "" || b.N == 1 {
				continue
			}
			name := file
			if len(st.pprofs) > 1 {
				name += "." + p.role
			}
			profiles = append(profiles, startProfile(p.addr, kind, name))
		}
	}
	durations := make([][]time.Duration, callers)
	// The allocation totals are read outside the CPU times: writing a heap
	// profile costs zen a few milliseconds.
	allocsBefore := st.allocs(b)
	before := st.cpu(b)
	b.ResetTimer()
	t0 := time.Now()
	st.parallel(b, callers, func(c int) error {
		return run(c, calls[c][warm*per:], func(d time.Duration) { durations[c] = append(durations[c], d) })
	})
	elapsed := time.Since(t0)
	b.StopTimer()
	after := st.cpu(b)
	allocsAfter := st.allocs(b)
	for _, profile := range profiles {
		if err := <-profile; err != nil {
			b.Errorf("profile: %v", err)
		}
	}
	if st.spans != nil && b.N > 1 {
		st.collectSpans(b, t0, t0.Add(elapsed), b.N)
	}
	var all, apart []time.Duration
	for _, d := range durations {
		for _, x := range d {
			all = append(all, max(0, x-fake))
			apart = append(apart, max(0, x-fakeApart))
		}
	}
	latency.Report(b, all)
	latency.ReportP50(b, apart, "p50-apart-ms")
	measured := float64(len(all))
	b.ReportMetric(measured/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(fake.Microseconds())/1000, "fake-ms")
	b.ReportMetric(float64(fakeApart.Microseconds())/1000, "fake-apart-ms")
	b.ReportMetric((after.zen-before.zen).Seconds()*1000/measured, "cpu-ms/call")
	b.ReportMetric((after.client-before.client).Seconds()*1000/measured, "client-cpu-ms/call")
	b.ReportMetric(float64(after.zenIO.reads-before.zenIO.reads)/measured, "syscr/call")
	b.ReportMetric(float64(after.zenIO.writes-before.zenIO.writes)/measured, "syscw/call")
	if st.redisPID != 0 {
		b.ReportMetric((after.redis-before.redis).Seconds()*1000/measured, "redis-cpu-ms/call")
	}
	if len(st.pprofs) > 0 {
		b.ReportMetric(float64(allocsAfter.bytes-allocsBefore.bytes)/1024/measured, "alloc-kb/call")
		b.ReportMetric(float64(allocsAfter.objects-allocsBefore.objects)/measured, "allocs/call")
	}
	ours := after.zen - before.zen + after.client - before.client + after.redis - before.redis
	b.ReportMetric((after.machine-before.machine-ours).Seconds()*1000/measured, "other-cpu-ms/call")
}

// grow starts n threads and continues each until it holds turns turns,
// from every session at once, and returns their ids.
func (st *benchStack) grow(b *testing.B, n, turns int) []string {
	ids := make([]string, n)
	var next atomic.Int64
	st.parallel(b, benchSessions, func(c int) error {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			id := ""
			for t := 0; t < turns; t += 2 {
				prompt := sized(fmt.Sprint("Turn ", t+1, " of a conversation about call paths."), *promptBytes)
				var err error
				if id, err = st.chat(st.sessions[c], id, prompt); err != nil {
					return err
				}
			}
			ids[i] = id
		}
		return nil
	})
	return ids
}

// parallel runs fn for callers 0..n-1 at once and fails b on the first
// error.
func (st *benchStack) parallel(b *testing.B, n int, fn func(c int) error) {
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for c := range n {
		wg.Go(func() { errs <- fn(c) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTimes are CPU seconds used so far, and zen's read and write system
// calls.
type cpuTimes struct {
	zen, redis, client, machine time.Duration
	zenIO                       sysCalls
}

func (st *benchStack) cpu(b *testing.B) cpuTimes {
	var t cpuTimes
	for _, pid := range st.zenPIDs {
		t.zen += procCPU(b, pid)
		io := procSysCalls(b, pid)
		t.zenIO.reads += io.reads
		t.zenIO.writes += io.writes
	}
	if st.redisPID != 0 {
		t.redis = procCPU(b, st.redisPID)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	t.client = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	t.machine = machineBusy(b)
	return t
}

// pprofListener is where a zen process of the stack serves pprof.
type pprofListener struct{ role, addr string }

// startProfile takes a profile of kind (net/http/pprof's name: profile
// for CPU, allocs) from the pprof listener at addr for -zen.cpuprofile-for
// and writes it to file.
func startProfile(addr, kind, file string) chan error {
	done := make(chan error, 1)
	go func() {
		url := fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", addr, kind,
			int(serveCPUProfileFor.Seconds()))
		resp, err := http.Get(url)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			done <- fmt.Errorf("%s answered %s", url, resp.Status)
			return
		}
		f, err := os.Create(file)
		if err != nil {
			done <- err
			return
		}
		_, err = f.ReadFrom(resp.Body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	return done
}
