package deploy

import (
	"net"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type composeFile struct {
	XZen     any                       `json:"x-zen"`
	Services map[string]composeService `json:"services"`
	Volumes  map[string]any            `json:"volumes"`
}

type composeService struct {
	Image       string            `json:"image"`
	Build       map[string]string `json:"build"`
	Restart     string            `json:"restart"`
	EnvFile     []map[string]any  `json:"env_file"`
	Environment map[string]string `json:"environment"`
	Command     []string          `json:"command"`
	DependsOn   map[string]any    `json:"depends_on"`
	Ports       []string          `json:"ports"`
	Volumes     []string          `json:"volumes"`
	Healthcheck struct {
		Test     []string `json:"test"`
		Interval string   `json:"interval"`
		Timeout  string   `json:"timeout"`
		Retries  int      `json:"retries"`
	} `json:"healthcheck"`
}

// imageDefaults are the listen addresses the Dockerfile sets.
var imageDefaults = map[string]string{"ZEN_GRPC_ADDR": "0.0.0.0:9090", "ZEN_MCP_ADDR": "0.0.0.0:8080", "ZEN_HTTP_ADDR": "0.0.0.0:8081"}

func TestCompose(t *testing.T) {
	raw, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	dockerfile, _ := os.ReadFile("Dockerfile")
	for k, v := range imageDefaults {
		if !strings.Contains(string(dockerfile), k+"="+v) {
			t.Errorf("the Dockerfile no longer sets %s=%s", k, v)
		}
	}
	known := knownVariables(t)
	roles := map[string]string{} // service -> role
	for name, s := range c.Services {
		if name == "redis" {
			continue
		}
		if len(s.Command) != 1 {
			t.Errorf("%s: command %v, want one zen role", name, s.Command)
			continue
		}
		roles[name] = s.Command[0]
		for k := range s.Environment {
			if !known[k] {
				t.Errorf("%s sets %s, which zen does not read", name, k)
			}
		}
		test := strings.Join(s.Healthcheck.Test, " ")
		var want string
		switch s.Command[0] {
		case "memory", "router", "executor":
			want = "CMD /zen health --grpc 127.0.0.1:9090"
		case "edge":
			want = "CMD /zen health --http http://127.0.0.1:8080/readyz"
		case "gateway":
			want = "CMD /zen health --http http://127.0.0.1:8081/readyz"
		default:
			t.Errorf("%s runs unknown role %s", name, s.Command[0])
		}
		if test != want {
			t.Errorf("%s healthcheck %q, want %q", name, test, want)
		}
	}
	for name, s := range c.Services {
		for _, v := range []string{"ZEN_MEMORY_ADDR", "ZEN_ROUTER_ADDR", "ZEN_EXECUTOR_ADDR"} {
			addr := s.Environment[v]
			if addr == "" {
				continue
			}
			host, port, _ := net.SplitHostPort(addr)
			if want := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(v, "ZEN_"), "_ADDR")); roles[host] != want || port != "9090" {
				t.Errorf("%s: %s=%s should name the %s service on 9090", name, v, addr, want)
			}
		}
	}
	// The health check zen runs in the image must exist with those flags.
	for _, args := range [][]string{{"health", "--grpc", "127.0.0.1:1", "--timeout", "100ms"}, {"health", "--http", "http://127.0.0.1:1/readyz", "--timeout", "100ms"}} {
		out, err := runZen(args...)
		if err == nil || strings.Contains(out, "flag provided but not defined") {
			t.Errorf("zen %v: %v %s", args, err, out)
		}
	}
}
