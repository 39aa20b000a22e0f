package main

import (
	"context"
	"maps"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestStartupErrorsNameTheVariable(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"bad ttl", map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1", "CONVERSATION_TIMEOUT_HOURS": "three"}, []string{"serve"}, "CONVERSATION_TIMEOUT_HOURS"},
		{"bad turn limit", map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1", "MAX_CONVERSATION_TURNS": "-4"}, []string{"serve"}, "MAX_CONVERSATION_TURNS"},
		{"bad address", map[string]string{"ZEN_GRPC_ADDR": "nine-thousand"}, []string{"memory"}, "ZEN_GRPC_ADDR"},
		{"bad provider url", map[string]string{"CUSTOM_API_URL": "ftp://models"}, []string{"router"}, "CUSTOM_API_URL"},
		{"edge without memory", nil, []string{"edge"}, "ZEN_MEMORY_ADDR"},
		{"bad drain timeout", map[string]string{"ZEN_DRAIN_TIMEOUT": "soon"}, []string{"memory"}, "ZEN_DRAIN_TIMEOUT"},
		{"bad replica list", map[string]string{"ZEN_MEMORY_ADDR": "127.0.0.1:9091,memory-2"}, []string{"edge"},
			`ZEN_MEMORY_ADDR="127.0.0.1:9091,memory-2": "memory-2" is not host:port`},
		{"not a gRPC target", map[string]string{"ZEN_ROUTER_ADDR": "http://router:9090"}, []string{"executor"},
			"ZEN_ROUTER_ADDR=\"http://router:9090\": zen dials host:port, a list of them, or dns:///name:port"},
		{"connection age grace within the drain", map[string]string{"ZEN_DRAIN_TIMEOUT": "100s",
			"ZEN_GRPC_MAX_CONNECTION_AGE_GRACE": "60s"}, []string{"memory"},
			`ZEN_GRPC_MAX_CONNECTION_AGE_GRACE="60s": must exceed ZEN_DRAIN_TIMEOUT (1m40s)`},
		{"bad log level", map[string]string{"LOG_LEVEL": "LOUD"}, []string{"memory"}, "LOG_LEVEL"},
		{"a client's bound below a thread's", map[string]string{"ZEN_CLIENT_STORE_MB": "8"}, []string{"memory"},
			"ZEN_CLIENT_STORE_MB=8: want 0 (no bound) or at least 32"},
		{"a client's bound that is no number", map[string]string{"ZEN_CLIENT_STORE_MB": "1G"}, []string{"memory"},
			"ZEN_CLIENT_STORE_MB"},
		{"unknown command", nil, []string{"serv"}, `unknown command "serv"`},
		{"bad thinkdeep default", map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1", "DEFAULT_THINKING_MODE_THINKDEEP": "deep"}, []string{"serve"}, "DEFAULT_THINKING_MODE_THINKDEEP"},
		{"bad clink config", map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1", "CLI_CLIENTS_CONFIG_PATH": "/nonexistent/clis"}, []string{"serve"}, "CLI_CLIENTS_CONFIG_PATH"},
		{"short token", map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1", "ZEN_AUTH_TOKEN": "secret"}, []string{"serve"}, "ZEN_AUTH_TOKEN: use at least 16 characters"},
		{
			"trace url without its placeholder",
			map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1", "ZEN_TRACE_URL": "http://localhost:16686/trace/"},
			[]string{"serve"},
			`ZEN_TRACE_URL "http://localhost:16686/trace/" has no {trace_id}`,
		},
		{"trace url of another scheme", map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1",
			"ZEN_TRACE_URL": "javascript:alert('{trace_id}')"}, []string{"serve"}, "is not http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(zenBin, tt.args...)
			cmd.Env = baseEnv(t, tt.env)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tt.want) {
				t.Errorf("err %v, output %q; want a failure naming %q", err, out, tt.want)
			}
		})
	}
}

func TestDotEnvNeverOverridesTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	if err := writeFile(dir+"/.env", "MAX_CONVERSATION_TURNS=nonsense\nCUSTOM_API_URL=http://127.0.0.1:1/v1\n"); err != nil {
		t.Fatal(err)
	}
	// A memory role that starts serves until killed; the timeout ends it.
	run := func(env map[string]string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, zenBin, "memory", "--grpc-addr", "127.0.0.1:0")
		cmd.Env, cmd.Dir = baseEnv(t, env), dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, _ := run(nil); !strings.Contains(out, "MAX_CONVERSATION_TURNS") {
		t.Errorf(".env value was not read: %s", out)
	}
	if out, _ := run(map[string]string{"MAX_CONVERSATION_TURNS": "10"}); !strings.Contains(out, `"listening"`) {
		t.Errorf("the process environment should win over .env: %s", out)
	}
}

func TestSIGTERMDrainsAnInFlightCall(t *testing.T) {
	fake := fakemodel.New(t)
	arrived := make(chan struct{}, 1)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		arrived <- struct{}{}
		return fakemodel.Reply{Content: "finished despite the shutdown", Delay: 500 * time.Millisecond}
	})
	p := startZen(t, fakeEnv(fake), []string{"mcp"}, "serve", "--mcp-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0")
	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
			"prompt": "slow one", "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"}})
		done <- answer{res, err}
	}()
	<-arrived
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil || a.res.IsError || !strings.Contains(text(a.res), "finished despite the shutdown") {
		t.Fatalf("in-flight call was cut: %v %v", a.err, a.res)
	}
	if err := <-p.done; err != nil {
		t.Errorf("zen exited with %v after SIGTERM, want 0\n%s", err, p.logText())
	}
}

func TestDependencyDownGivesAClearError(t *testing.T) {
	fake := fakemodel.New(t)
	env := fakeEnv(fake)
	mem := startZen(t, map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}, []string{"grpc"}, "memory")
	rt := startZen(t, mergeEnv(env, map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), []string{"grpc"}, "router")
	ex := startZen(t, map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0", "ZEN_ROUTER_ADDR": rt.addr("grpc")}, []string{"grpc"}, "executor")
	addrs := map[string]string{"ZEN_MEMORY_ADDR": mem.addr("grpc"), "ZEN_ROUTER_ADDR": rt.addr("grpc"), "ZEN_EXECUTOR_ADDR": ex.addr("grpc")}
	edge := startZen(t, addrs, []string{"mcp"}, "edge", "--mcp-addr", "127.0.0.1:0")
	gw := startZen(t, addrs, []string{"gateway"}, "gateway", "--http-addr", "127.0.0.1:0")
	cs := connectHTTP(t, "http://"+edge.addr("mcp")+"/mcp")
	mem.stop()

	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
		"prompt": "anyone there?", "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "memory service is unavailable") {
		t.Errorf("err = %v, result %v; want a tool error saying the memory service is unavailable", err, res)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the model was called %d times with memory down", n)
	}
	if code, body := getJSON(t, "http://"+gw.addr("gateway")+"/readyz"); code != 503 || !strings.Contains(body["reason"].(string), "memory") {
		t.Errorf("readyz = %d %v, want 503 naming memory", code, body)
	}
}

func TestCancelledCallCancelsTheProviderRequest(t *testing.T) {
	fake := fakemodel.New(t)
	arrived := make(chan struct{}, 1)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { arrived <- struct{}{}; return fakemodel.Reply{Stall: true} })
	for _, s := range []struct {
		name  string
		start func(*testing.T, map[string]string) stack
	}{{"serve", serveStack}, {"stdio", stdioStack}} {
		t.Run(s.name, func(t *testing.T) {
			st := s.start(t, fakeEnv(fake))
			before := len(fake.Requests())
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := st.session.CallTool(ctx, &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
					"prompt": "never answered", "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"}})
				errc <- err
			}()
			<-arrived
			cancel()
			if err := <-errc; err == nil {
				t.Error("a cancelled call returned a result")
			}
			fake.WaitCancelled(t, before)
		})
	}
}

func mergeEnv(a, b map[string]string) map[string]string { return merged(a, b) }

// merged is a copy of a with b's entries over it.
func merged[V any](a, b map[string]V) map[string]V {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]V{}
	}
	maps.Copy(out, b)
	return out
}
