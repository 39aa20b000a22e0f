package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestPrometheusMetrics(t *testing.T) {
	fake := fakemodel.New(t)
	p := startZen(t, mergeEnv(fakeEnv(fake), map[string]string{"ZEN_METRICS_ADDR": "127.0.0.1:0"}), []string{"mcp", "metrics"}, serveArgs()...)
	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
	callTool(t, cs, "chat", map[string]any{"prompt": "hi", "model": "llama3.2", "working_directory_absolute_path": t.TempDir()})
	callTool(t, cs, "chat", map[string]any{"prompt": "hi", "working_directory_absolute_path": "relative"})
	res, err := http.Get("http://" + p.addr("metrics") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	text := string(body)
	for _, want := range []string{
		`zen_tool_calls_total{`, `outcome="ok"`, `outcome="tool_error"`, `tool="chat"`,
		`zen_tool_duration_seconds_bucket{`,
		`zen_model_calls_total{`, `provider="custom"`, `model="llama3.2"`,
		`zen_model_tokens_total{`, `direction="output"`,
		`rpc_server_`, `go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "zen_") {
				t.Log(line)
			}
		}
	}
}

// TestMetricsAndProfilesRefuseARebindingPage: the metrics and profile
// listeners answer a page that reached them by DNS rebinding (its own host
// name), or that sent its browser there (a cross-site GET could start a
// CPU profile), with 403, and still answer a scraper that names them by
// an address, as Prometheus names a pod, or by loopback.
func TestMetricsAndProfilesRefuseARebindingPage(t *testing.T) {
	t.Parallel()
	p := startZen(t, mergeEnv(fakeEnv(fakemodel.New(t)), map[string]string{"ZEN_METRICS_ADDR": "127.0.0.1:0",
		"ZEN_PPROF_ADDR": "127.0.0.1:0"}), []string{"mcp", "metrics", "pprof"}, serveArgs()...)
	for _, path := range []string{p.addr("metrics") + "/metrics", p.addr("pprof") + "/debug/pprof/cmdline"} {
		for host, want := range map[string]int{"attacker.example": 403, "attacker.example:9464": 403,
			"10.1.2.3:9464": 200, "localhost": 200, "": 200, "cross-site": 403, "same-site": 403, "none": 200} {
			req, err := http.NewRequest("GET", "http://"+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			switch host {
			case "cross-site", "same-site", "none": // a page's GET, or the address bar's: the Host is loopback
				req.Header.Set("Sec-Fetch-Site", host)
			case "":
			default:
				req.Host = host
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != want {
				t.Errorf("GET %s with Host %q: %d, want %d", path, host, res.StatusCode, want)
			}
		}
	}
}

// TestAClientsHostNamesNoSeries: the MCP and gateway listeners' HTTP
// metrics took the server's address from each request's Host header,
// before its host and token were checked: a client without a token made a
// series, kept for the process's life, of every name it sent (500 KB
// each, to 360 MB of the edge's memory in 200 refused requests).
func TestAClientsHostNamesNoSeries(t *testing.T) {
	t.Parallel()
	p := startZen(t, mergeEnv(fakeEnv(fakemodel.New(t)), map[string]string{"ZEN_METRICS_ADDR": "127.0.0.1:0"}),
		[]string{"mcp", "gateway", "metrics"}, serveArgs()...)
	for _, addr := range []string{p.addr("mcp") + "/mcp", p.addr("gateway") + "/v1/threads"} {
		for _, host := range []string{"chosen-by-a-client.example", "another-one.example", "localhost"} {
			req, err := http.NewRequest("GET", "http://"+addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
	}
	res, err := http.Get("http://" + p.addr("metrics") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(body), "http_server_request_") {
		t.Fatalf("no HTTP server metrics:\n%.2000s", body)
	}
	for _, name := range []string{"chosen-by-a-client", "another-one", "server_address", "server_port"} {
		if strings.Contains(string(body), name) {
			t.Errorf("/metrics holds %q, a label a client chose", name)
		}
	}
}
