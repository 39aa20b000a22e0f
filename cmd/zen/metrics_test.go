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
