package main

import (
	"bufio"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// cluster drives scripts/cluster.sh: the make cluster layout, on ports of
// its own.
type cluster struct {
	t    *testing.T
	env  []string
	base int
}

// script runs cluster.sh with the cluster's environment.
func (c *cluster) script(args ...string) (string, error) {
	cmd := exec.Command("../../scripts/cluster.sh", args...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (c *cluster) run(args ...string) string {
	c.t.Helper()
	out, err := c.script(args...)
	if err != nil {
		c.t.Fatalf("cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c *cluster) addr(offset int) string { return fmt.Sprintf("127.0.0.1:%d", c.base+offset) }

// freeBase finds a base port whose cluster ports are all free: seven
// consecutive ones for the members, and the extra replicas' (base+12 to
// base+19 for memory, +22 to +29 for the router, +32 to +39 for the
// executor; scripts/cluster.sh).
func freeBase(t testing.TB) int {
	offsets := []int{0, 1, 2, 3, 4, 5, 6}
	for _, tens := range []int{10, 20, 30} {
		for k := 2; k <= 9; k++ {
			offsets = append(offsets, tens+k)
		}
	}
	for range 50 {
		base := 20000 + rand.IntN(30000)
		ok := true
		for _, i := range offsets {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+i))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no base port with every cluster port free")
	return 0
}

// memberPID is the pid of the member name of the cluster whose state is
// in dir.
func memberPID(t *testing.T, dir, name string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "pids", name+".pid"))
	if err != nil {
		t.Fatalf("%s's pid: %v", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("%s's pid file: %v", name, err)
	}
	return pid
}

// memberEnv is the value of key in the environment of the member name of
// the cluster whose state is in dir (from /proc: Linux).
func memberEnv(t *testing.T, dir, name, key string) string {
	t.Helper()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", memberPID(t, dir, name)))
	if err != nil {
		t.Fatalf("%s's environment: %v", name, err)
	}
	for kv := range strings.SplitSeq(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// coresCommand is an nproc that answers what a test says: cluster.sh asks
// it how many cores the machine has.
type coresCommand struct {
	t   *testing.T
	dir string
}

// fakeCores puts an nproc answering n in a directory of its own, for the
// front of a PATH.
func fakeCores(t *testing.T, n int) coresCommand {
	c := coresCommand{t: t, dir: t.TempDir()}
	c.set(n)
	return c
}

func (c coresCommand) set(n int) {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(c.dir, "nproc"), fmt.Appendf(nil, "#!/bin/sh\necho %d\n", n), 0o755); err != nil {
		c.t.Fatal(err)
	}
}

// TestLocalClusterRefusesABadGOMAXPROCS: up starts nothing with a
// GOMAXPROCS no zen process could run with, and says what it wants; status
// and down answer whatever it holds.
func TestLocalClusterRefusesABadGOMAXPROCS(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "cluster")
	for _, bad := range []string{"0", "08", "abc", "2;true", "99999"} {
		c := &cluster{t: t, base: 20000}
		c.env = []string{"PATH=" + os.Getenv("PATH"), "ZEN_BIN=" + zenBin, "ZEN_CLUSTER_DIR=" + dir,
			"ZEN_CLUSTER_PORT_BASE=20000", "GOMAXPROCS=" + bad}
		out, err := c.script("up")
		if err == nil || !strings.Contains(out, "GOMAXPROCS="+bad+": want each zen process's threads, a number") {
			t.Errorf("GOMAXPROCS=%s: up answered %v\n%s\nwant a refusal that says what it wants", bad, err, out)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("GOMAXPROCS=%s: up left %s behind (%v)", bad, dir, err)
		}
		for _, cmd := range []string{"status", "down"} {
			if out, err := c.script(cmd); err != nil {
				t.Errorf("GOMAXPROCS=%s: %s failed: %v\n%s", bad, cmd, err, out)
			}
		}
	}
}

// TestLocalCluster is make cluster's scenario: two edges share threads
// through Redis, and the memory role restarts mid-conversation with
// nothing lost.
func TestLocalCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server and seven processes")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed: run make deps")
	}
	fake := fakemodel.New(t)
	dir := filepath.Join(t.TempDir(), "cluster") // made by up, as .cluster is
	c := &cluster{t: t, base: freeBase(t)}
	cores := fakeCores(t, 12) // so that the share is a division, not the floor of 1
	argsSeen := recordEnvArgs(t, cores.dir)
	c.env = []string{"PATH=" + cores.dir + ":" + os.Getenv("PATH"), "HOME=" + zenHome, "ZEN_BIN=" + zenBin,
		"ZEN_CLUSTER_DIR=" + dir, fmt.Sprintf("ZEN_CLUSTER_PORT_BASE=%d", c.base), "CUSTOM_API_URL=" + fake.URL()}
	t.Cleanup(func() { c.run("down") })
	c.run("up")
	members := []string{"memory", "router", "executor", "edge-1", "edge-2", "gateway"}
	for _, name := range members {
		if got, want := memberEnv(t, dir, name, "GOMAXPROCS"), strconv.Itoa(12/len(members)); got != want {
			t.Errorf("%s runs with GOMAXPROCS=%q, want %s: 12 cores shared out between %d", name, got, want,
				len(members))
		}
	}
	cores.set(24) // a member restarted alone keeps the share up worked out

	edge1 := connectHTTP(t, "http://"+c.addr(5)+"/mcp")
	edge2 := connectHTTP(t, "http://"+c.addr(6)+"/mcp")
	wd := t.TempDir()
	_, got := callTool(t, edge1, "chat", map[string]any{"prompt": "FIRST on edge one", "model": "llama3.2", "working_directory_absolute_path": wd})
	id := got["continuation_offer"].(map[string]any)["continuation_id"].(string)
	res, _ := callTool(t, edge2, "chat", map[string]any{"prompt": "SECOND on edge two", "continuation_id": id, "working_directory_absolute_path": wd})
	if res.IsError || !strings.Contains(fake.Requests()[1].AllText(), "FIRST on edge one") {
		t.Fatalf("edge two did not continue edge one's thread: %s", text(res))
	}

	out := c.run("restart", "memory")
	if !strings.Contains(out, "memory ready") {
		t.Fatalf("restart: %s", out)
	}
	if got := memberEnv(t, dir, "memory", "GOMAXPROCS"); got != "2" {
		t.Errorf("memory restarted with GOMAXPROCS=%q, want the 2 its peers run with", got)
	}
	// The edge reconnects on its own; readiness says when.
	waitFor(t, 15*time.Second, "edge one to be ready after memory came back", func() bool {
		code, _ := getJSON(t, "http://"+c.addr(5)+"/readyz")
		return code == 200
	})
	res, _ = callTool(t, edge1, "chat", map[string]any{"prompt": "THIRD after the restart", "continuation_id": id, "working_directory_absolute_path": wd})
	sent := fake.Requests()[2].AllText()
	if res.IsError || !strings.Contains(sent, "FIRST on edge one") || !strings.Contains(sent, "SECOND on edge two") {
		t.Fatalf("after the memory restart: %s\n%s", text(res), sent)
	}
	code, thread := getJSON(t, "http://"+c.addr(4)+"/v1/threads/"+id)
	if code != 200 || len(thread["thread"].(map[string]any)["turns"].([]any)) != 6 {
		t.Errorf("the gateway shows %d %v, want 6 turns", code, thread)
	}
	checkGatewayUnsent(t, memberPID(t, dir, "gateway"), c.addr(4))
	if status := c.run("status"); strings.Count(status, "ready") != 7 {
		t.Errorf("status:\n%s", status)
	}
	checkStorePrivate(t, dir, c.addr(0))
	// Every user may read a process's arguments while it runs: no secret
	// may pass through them, even for the moment env takes to exec.
	seen, _ := os.ReadFile(argsSeen)
	for name, secret := range map[string]string{"the Redis password": memberRedisPassword(t, dir, "memory"),
		"the service token": memberEnv(t, dir, "memory", "ZEN_SERVICE_TOKEN")} {
		if secret == "" || strings.Contains(string(seen), secret) {
			t.Errorf("%s (%q) was in the arguments env ran with:\n%s", name, secret, seen)
		}
	}
}

// recordEnvArgs puts in dir an env that records the arguments it runs with
// before it runs the real one, and returns the file that holds them.
func recordEnvArgs(t *testing.T, dir string) string {
	t.Helper()
	real, err := exec.LookPath("env")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "env-args")
	script := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >>%q\nexec %q \"$@\"\n", log, real)
	if err := os.WriteFile(filepath.Join(dir, "env"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return log
}

// checkStorePrivate fails unless the local cluster's store is as private
// as zen serve's SQLite file: its Redis answers no one without its
// password, which no other user can read from a file, a process's
// arguments or the append-only file, nor can they read its logs.
func checkStorePrivate(t *testing.T, dir, redisAddr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", redisAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || !strings.HasPrefix(reply, "-NOAUTH") {
		t.Errorf("Redis answered a PING without its password: %q (%v); want -NOAUTH", reply, err)
	}
	args, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", memberPID(t, dir, "redis")))
	if err != nil {
		t.Fatal(err)
	}
	if pw := memberRedisPassword(t, dir, "memory"); pw == "" || strings.Contains(string(args), pw) {
		t.Errorf("memory's REDIS_URL has password %q; redis-server's arguments are %q: want a password, and "+
			"not in arguments every user can read", pw, args)
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err == nil && info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is %v: others may read or enter it", path, info.Mode().Perm())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// memberRedisPassword is the password in a member's REDIS_URL.
func memberRedisPassword(t *testing.T, dir, name string) string {
	t.Helper()
	u, err := url.Parse(memberEnv(t, dir, name, "REDIS_URL"))
	if err != nil {
		t.Fatalf("%s's REDIS_URL: %v", name, err)
	}
	pw, _ := u.User.Password()
	return pw
}
