package deploy

import (
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// peerVariables name the Services of the roles zen calls over gRPC.
var peerVariables = map[string]string{
	"ZEN_MEMORY_ADDR": "zen-memory", "ZEN_ROUTER_ADDR": "zen-router", "ZEN_EXECUTOR_ADDR": "zen-executor",
}

// checkBalancing: calls spread over every replica (issue 17). The gRPC
// roles' Services are headless and zen dials them as dns:/// names, so
// each caller connects to every ready pod and balances calls, not
// connections; servers recycle connections so callers meet new pods, with
// a grace that outlasts the drain and the longest model call; and no gRPC
// pod is killed before the grace is over.
func checkBalancing(t *testing.T, o objects, cm *corev1.ConfigMap) {
	t.Helper()
	for v, name := range peerVariables {
		svc := o.services[name]
		if svc == nil {
			t.Errorf("no Service %s", name)
			continue
		}
		if svc.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Errorf("Service %s should be headless (clusterIP: None): a virtual IP balances connections, and gRPC "+
				"keeps one, so every call of a caller would go to one pod", name)
		}
		target, ok := strings.CutPrefix(cm.Data[v], "dns:///")
		if host, _, err := net.SplitHostPort(target); !ok || err != nil || host != name {
			t.Errorf("%s=%q: want dns:///%s:<port>, so zen resolves every pod of the headless Service", v,
				cm.Data[v], name)
		}
	}
	duration := func(v string) time.Duration {
		d, err := time.ParseDuration(cm.Data[v])
		if err != nil || d <= 0 {
			t.Errorf("zen-config should set %s to a duration, not %q", v, cm.Data[v])
		}
		return d
	}
	age, grace := duration("ZEN_GRPC_MAX_CONNECTION_AGE"), duration("ZEN_GRPC_MAX_CONNECTION_AGE_GRACE")
	drain := duration("ZEN_DRAIN_TIMEOUT")
	// The longest a model call may take, as the ConfigMap sets it, so that
	// raising it there without the grace fails here. (clink's runs default
	// to 30 min too: timeout_seconds in a CLI's configuration.)
	longestCall := duration("ZEN_PROVIDER_TIMEOUT")
	if age > 5*time.Minute {
		t.Errorf("ZEN_GRPC_MAX_CONNECTION_AGE=%s: new pods would wait that long for calls", age)
	}
	if grace <= drain {
		t.Errorf("ZEN_GRPC_MAX_CONNECTION_AGE_GRACE=%s should exceed ZEN_DRAIN_TIMEOUT=%s: a reconnect must not cut "+
			"a call a shutdown would let finish", grace, drain)
	}
	if grace < longestCall {
		t.Errorf("ZEN_GRPC_MAX_CONNECTION_AGE_GRACE=%s: a model call may take ZEN_PROVIDER_TIMEOUT=%s, and every "+
			"connection reaches its age: shorter, it would cut long calls", grace, longestCall)
	}
	for role := range grpcServices {
		name := "zen-" + role
		d := o.deployments[name]
		if d == nil {
			continue // TestOverlays names the missing Deployment
		}
		if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= grace {
			t.Errorf("%s: terminationGracePeriodSeconds must exceed ZEN_GRPC_MAX_CONNECTION_AGE_GRACE (%s)", name, grace)
		}
	}
}
