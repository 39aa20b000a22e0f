package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// graceWarning is the router's startup warning about a model call that may
// outlast its connection's grace.
type graceWarning struct {
	Level           string `json:"level"`
	Msg             string `json:"msg"`
	ProviderTimeout string `json:"ZEN_PROVIDER_TIMEOUT"`
	Grace           string `json:"ZEN_GRPC_MAX_CONNECTION_AGE_GRACE"`
}

// TestRouterWarnsWhenModelCallsOutlastTheGrace: a connection that reached
// its age closes under the calls still on it once its grace is over, so a
// router whose model calls may take as long (ZEN_PROVIDER_TIMEOUT) says so
// when it starts, in one warning naming both settings; by default it says
// nothing.
func TestRouterWarnsWhenModelCallsOutlastTheGrace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []graceWarning
	}{
		{"defaults", nil, nil},
		{"a model call as long as the grace", map[string]string{"ZEN_PROVIDER_TIMEOUT": "31m"},
			[]graceWarning{{Level: "WARN", Msg: "model calls may outlast their connection's grace",
				ProviderTimeout: "31m0s", Grace: "31m0s"}}},
		{"a grace shorter than the model calls", map[string]string{"ZEN_GRPC_MAX_CONNECTION_AGE_GRACE": "10m"},
			[]graceWarning{{Level: "WARN", Msg: "model calls may outlast their connection's grace",
				ProviderTimeout: "30m0s", Grace: "10m0s"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "ZEN_GRPC_ADDR": "127.0.0.1:0"}
			for k, v := range tc.env {
				env[k] = v
			}
			rt := startZen(t, env, []string{"grpc"}, "router")
			var got []graceWarning
			sc := bufio.NewScanner(strings.NewReader(rt.logText()))
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var w graceWarning
				if json.Unmarshal(sc.Bytes(), &w) == nil && (w.ProviderTimeout != "" || w.Grace != "") {
					got = append(got, w)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the router's warnings about the grace (-want +got):\n%s\nlog:\n%s", diff, rt.logText())
			}
		})
	}
}
