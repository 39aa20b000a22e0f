package deploy

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// objects is one rendered overlay, decoded.
type objects struct {
	deployments  map[string]*appsv1.Deployment
	statefulSets map[string]*appsv1.StatefulSet
	services     map[string]*corev1.Service
	configMaps   map[string]*corev1.ConfigMap
	pdbs         map[string]*policyv1.PodDisruptionBudget
	hpas         map[string]*autoscalingv2.HorizontalPodAutoscaler
	policies     map[string]*networkingv1.NetworkPolicy
}

// render builds an overlay with kustomize and decodes every object with
// the Kubernetes types, failing on unknown kinds and unknown fields.
func render(t *testing.T, overlay string) objects {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join("..", "k8s", "overlays", overlay))
	if err != nil {
		t.Fatalf("kustomize %s: %v", overlay, err)
	}
	o := objects{map[string]*appsv1.Deployment{}, map[string]*appsv1.StatefulSet{}, map[string]*corev1.Service{},
		map[string]*corev1.ConfigMap{}, map[string]*policyv1.PodDisruptionBudget{},
		map[string]*autoscalingv2.HorizontalPodAutoscaler{}, map[string]*networkingv1.NetworkPolicy{}}
	for _, r := range m.Resources() {
		raw, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		kind, name := r.GetKind(), r.GetName()
		strict := func(into any) {
			if err := yaml.UnmarshalStrict(raw, into); err != nil {
				t.Errorf("%s: %s %s does not decode strictly: %v", overlay, kind, name, err)
			}
		}
		switch kind {
		case "Deployment":
			decodeInto(o.deployments, name, strict)
		case "StatefulSet":
			decodeInto(o.statefulSets, name, strict)
		case "Service":
			decodeInto(o.services, name, strict)
		case "ConfigMap":
			decodeInto(o.configMaps, name, strict)
		case "PodDisruptionBudget":
			decodeInto(o.pdbs, name, strict)
		case "HorizontalPodAutoscaler":
			decodeInto(o.hpas, name, strict)
		case "NetworkPolicy":
			decodeInto(o.policies, name, strict)
		default:
			t.Errorf("%s: unexpected kind %s (%s)", overlay, kind, name)
		}
	}
	return o
}

// decodeInto decodes one object into a new T kept under its name.
func decodeInto[T any](into map[string]*T, name string, decode func(any)) {
	obj := new(T)
	decode(obj)
	into[name] = obj
}

// grpcServices are the health service names each gRPC role serves.
var grpcServices = map[string]string{
	"memory": "zen.memory.v1.MemoryService", "router": "zen.router.v1.RouterService", "executor": "zen.executor.v1.ExecutorService",
}

// httpRoles serve HTTP on the port their variable names.
var httpRoles = map[string]string{"edge": "ZEN_MCP_ADDR", "gateway": "ZEN_HTTP_ADDR"}

func port(t *testing.T, addr string) int32 {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	var n int32
	fmt.Sscan(p, &n)
	return n
}

func containerPort(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// resolvePort turns a named or numbered port into a number for c.
func resolvePort(c corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.String {
		return containerPort(c, p.StrVal)
	}
	return p.IntVal
}

func TestOverlays(t *testing.T) {
	known := knownVariables(t)
	for _, overlay := range []string{"dev", "prod"} {
		t.Run(overlay, func(t *testing.T) {
			o := render(t, overlay)
			cm := o.configMaps["zen-config"]
			if cm == nil {
				t.Fatal("no zen-config ConfigMap")
			}
			for name := range cm.Data {
				if !known[name] {
					t.Errorf("zen-config sets %s, which zen does not read", name)
				}
			}
			roles := map[string]bool{}
			for name, d := range o.deployments {
				checkDeployment(t, o, name, d, cm)
				roles[strings.TrimPrefix(name, "zen-")] = true
			}
			for _, want := range []string{"memory", "router", "executor", "edge", "gateway"} {
				if !roles[want] {
					t.Errorf("no Deployment for the %s role", want)
				}
			}
			// Every address zen dials names a Service with that port.
			for _, v := range []string{"ZEN_MEMORY_ADDR", "ZEN_ROUTER_ADDR", "ZEN_EXECUTOR_ADDR"} {
				host, p, _ := net.SplitHostPort(strings.TrimPrefix(cm.Data[v], "dns:///"))
				svc := o.services[host]
				if svc == nil || !slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool { return fmt.Sprint(sp.Port) == p }) {
					t.Errorf("%s=%s names no Service with that port", v, cm.Data[v])
				}
			}
			checkBalancing(t, o, cm)
			checkAllowedHosts(t, o, cm)
			checkServiceCredentials(t, o, overlay == "prod")
			checkServices(t, o)
			checkScaling(t, o)
			checkPolicies(t, o)
			checkMetricsReach(t, o)
			edge := o.services["zen-edge"]
			if edge == nil || edge.Spec.Type != corev1.ServiceTypeLoadBalancer || edge.Annotations["networking.gke.io/load-balancer-type"] != "Internal" {
				t.Errorf("the edge Service should be an internal LoadBalancer: %+v", edge)
			}
			redisURL, inConfig := cm.Data["REDIS_URL"]
			switch overlay {
			case "dev":
				if o.statefulSets["redis"] == nil || o.services["redis"] == nil || !strings.HasPrefix(redisURL, "redis://redis:6379") {
					t.Errorf("dev should run Redis in a StatefulSet behind the redis Service (REDIS_URL=%q)", redisURL)
				}
			case "prod":
				if len(o.statefulSets) != 0 || inConfig {
					t.Error("prod should use an external Redis, its URL in the zen-secrets Secret")
				}
				if *o.deployments["zen-edge"].Spec.Replicas < 2 || o.hpas["zen-edge"].Spec.MaxReplicas <= *o.hpas["zen-edge"].Spec.MinReplicas {
					t.Error("prod should run several autoscaled edges")
				}
			}
		})
	}
}

func checkDeployment(t *testing.T, o objects, name string, d *appsv1.Deployment, cm *corev1.ConfigMap) {
	t.Helper()
	role := strings.TrimPrefix(name, "zen-")
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%s: want one container", name)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if len(c.Args) != 1 || c.Args[0] != role {
		t.Errorf("%s runs zen %v, want zen %s", name, c.Args, role)
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("%s: selector %s=%s does not match its pods", name, k, v)
		}
	}
	var sawConfig, sawSecret bool
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef != nil && o.configMaps[e.ConfigMapRef.Name] != nil {
			sawConfig = true
		}
		if e.SecretRef != nil && e.SecretRef.Name == "zen-secrets" {
			sawSecret = true
		}
	}
	if !sawConfig || !sawSecret {
		t.Errorf("%s should read the zen-config ConfigMap and the zen-secrets Secret", name)
	}
	if r := c.Resources; r.Requests.Cpu().IsZero() || r.Requests.Memory().IsZero() || r.Limits.Cpu().IsZero() || r.Limits.Memory().IsZero() {
		t.Errorf("%s: set resource requests and limits", name)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || d.Spec.Template.Spec.SecurityContext.RunAsNonRoot == nil {
		t.Errorf("%s: run as non-root on a read-only root filesystem", name)
	}
	drain, err := time.ParseDuration(cm.Data["ZEN_DRAIN_TIMEOUT"])
	if grace := d.Spec.Template.Spec.TerminationGracePeriodSeconds; err != nil || grace == nil || time.Duration(*grace)*time.Second <= drain {
		t.Errorf("%s: terminationGracePeriodSeconds must exceed ZEN_DRAIN_TIMEOUT (%q), or calls in flight are cut", name, cm.Data["ZEN_DRAIN_TIMEOUT"])
	}
	if metrics := containerPort(c, "metrics"); metrics != port(t, cm.Data["ZEN_METRICS_ADDR"]) {
		t.Errorf("%s: metrics port %d, ZEN_METRICS_ADDR %s", name, metrics, cm.Data["ZEN_METRICS_ADDR"])
	}
	for _, probe := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
		if probe == nil {
			t.Errorf("%s: needs startup, liveness and readiness probes", name)
			continue
		}
		if service, ok := grpcServices[role]; ok {
			want := port(t, cm.Data["ZEN_GRPC_ADDR"])
			if envValue(c, "ZEN_GRPC_TLS_CERT") != "" {
				checkTLSProbe(t, name, probe, want, probe == c.ReadinessProbe, service)
				continue
			}
			if probe.GRPC == nil || probe.GRPC.Port != want || containerPort(c, "grpc") != want {
				t.Errorf("%s: probes must use gRPC health on ZEN_GRPC_ADDR's port %d", name, want)
			} else if probe == c.ReadinessProbe && (probe.GRPC.Service == nil || *probe.GRPC.Service != service) {
				t.Errorf("%s: readiness should ask about %s", name, service)
			}
			continue
		}
		want := port(t, cm.Data[httpRoles[role]])
		if probe.HTTPGet == nil || resolvePort(c, probe.HTTPGet.Port) != want {
			t.Errorf("%s: probes must GET on %s's port %d", name, httpRoles[role], want)
		} else if path := probe.HTTPGet.Path; path != "/healthz" && path != "/readyz" || probe == c.ReadinessProbe && path != "/readyz" {
			t.Errorf("%s: probe path %s", name, path)
		}
	}
}

// checkAllowedHosts: the edge and gateway listen beyond loopback, so zen
// starts them only with ZEN_ALLOWED_HOSTS, and they must answer to the names
// of their Services. Probes need no entry: they GET /healthz and /readyz
// (checkDeployment), which skip the Host check.
func checkAllowedHosts(t *testing.T, o objects, cm *corev1.ConfigMap) {
	t.Helper()
	listed := map[string]bool{}
	for _, h := range strings.Split(cm.Data["ZEN_ALLOWED_HOSTS"], ",") {
		h = strings.TrimSpace(h)
		if strings.ContainsAny(h, ":/ ") {
			t.Errorf("ZEN_ALLOWED_HOSTS: %q should be a host name without scheme or port", h)
		}
		listed[h] = true
	}
	for _, svc := range []string{"zen-edge", "zen-gateway"} {
		if o.services[svc] == nil {
			continue
		}
		ns := o.services[svc].Namespace
		for _, name := range []string{svc, svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"} {
			if !listed[name] {
				t.Errorf("ZEN_ALLOWED_HOSTS=%q lacks %s: clients using that name would be refused",
					cm.Data["ZEN_ALLOWED_HOSTS"], name)
			}
		}
	}
}

// checkServices: each Service selects a Deployment's pods (or Redis) and
// targets a port its container has.
func checkServices(t *testing.T, o objects) {
	t.Helper()
	for name, svc := range o.services {
		var c *corev1.Container
		for _, d := range o.deployments {
			if labelsMatch(svc.Spec.Selector, d.Spec.Template.Labels) {
				c = &d.Spec.Template.Spec.Containers[0]
			}
		}
		for _, s := range o.statefulSets {
			if labelsMatch(svc.Spec.Selector, s.Spec.Template.Labels) {
				c = &s.Spec.Template.Spec.Containers[0]
			}
		}
		if c == nil {
			t.Errorf("Service %s selects no pods", name)
			continue
		}
		for _, p := range svc.Spec.Ports {
			if resolvePort(*c, p.TargetPort) == 0 {
				t.Errorf("Service %s port %s targets %v, which its pods do not expose", name, p.Name, p.TargetPort.String())
			}
		}
	}
}

func labelsMatch(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func checkScaling(t *testing.T, o objects) {
	t.Helper()
	for _, role := range []string{"edge", "executor"} {
		name := "zen-" + role
		d := o.deployments[name]
		hpa, pdb := o.hpas[name], o.pdbs[name]
		if hpa == nil || hpa.Spec.ScaleTargetRef.Name != name || hpa.Spec.ScaleTargetRef.Kind != "Deployment" {
			t.Errorf("%s needs a HorizontalPodAutoscaler targeting it", name)
		}
		if pdb == nil || !labelsMatch(pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
			t.Errorf("%s needs a PodDisruptionBudget selecting its pods", name)
		}
	}
}

// checkPolicies: the inner roles accept gRPC only from the edge and the
// gateway (and the router from the executor, which calls it).
func checkPolicies(t *testing.T, o objects) {
	t.Helper()
	want := map[string][]string{"memory": {"edge", "gateway"}, "router": {"edge", "executor", "gateway"}, "executor": {"edge", "gateway"}}
	for role, allowed := range want {
		p := o.policies["zen-"+role]
		if p == nil || p.Spec.PodSelector.MatchLabels["app.kubernetes.io/component"] != role {
			t.Errorf("no NetworkPolicy selects the %s pods", role)
			continue
		}
		var got []string
		for _, rule := range p.Spec.Ingress {
			for _, peer := range rule.From {
				if peer.NamespaceSelector != nil || peer.PodSelector == nil {
					if slices.ContainsFunc(rule.Ports, func(np networkingv1.NetworkPolicyPort) bool { return np.Port.String() == "grpc" }) {
						t.Errorf("%s: a rule opens gRPC beyond the namespace's zen pods", role)
					}
					continue
				}
				for _, e := range peer.PodSelector.MatchExpressions {
					got = append(got, e.Values...)
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, allowed) {
			t.Errorf("%s admits gRPC from %v, want %v", role, got, allowed)
		}
	}
}

// checkMetricsReach: every role's metrics are read by Prometheus alone. The
// edge's and gateway's had no policy, and the edge's internal load
// balancer published them: anything in the network read them.
func checkMetricsReach(t *testing.T, o objects) {
	t.Helper()
	for _, role := range []string{"memory", "router", "executor", "edge", "gateway"} {
		p := o.policies["zen-"+role]
		if p == nil || p.Spec.PodSelector.MatchLabels["app.kubernetes.io/component"] != role {
			t.Errorf("no NetworkPolicy selects the %s pods", role)
			continue
		}
		for _, rule := range p.Spec.Ingress {
			if len(rule.Ports) > 0 && !slices.ContainsFunc(rule.Ports, func(np networkingv1.NetworkPolicyPort) bool {
				return np.Port.String() == "metrics"
			}) {
				continue // a rule without ports admits every one
			}
			for _, peer := range rule.From {
				if peer.PodSelector == nil || peer.PodSelector.MatchLabels["app.kubernetes.io/name"] != "prometheus" {
					t.Errorf("%s: a rule admits its metrics from beyond Prometheus: %+v", role, peer)
				}
			}
			if len(rule.From) == 0 {
				t.Errorf("%s: a rule admits its metrics from anywhere", role)
			}
		}
	}
	for name, svc := range o.services {
		for _, p := range svc.Spec.Ports {
			if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && p.Name == "metrics" {
				t.Errorf("the load balancer %s publishes the metrics port", name)
			}
		}
	}
}

var tableVariable = regexp.MustCompile("^\\| `([A-Z][A-Z0-9_]+)`")

// knownVariables are the variables zen reads: each flag's (from the
// binary's own help) and those in the README's configuration table, which
// TestREADMEVariablesAreRead keeps honest.
func knownVariables(t *testing.T) map[string]bool {
	t.Helper()
	known := map[string]bool{}
	for _, v := range flagVariables(t) {
		known[v] = true
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(readme), "\n") {
		if m := tableVariable.FindStringSubmatch(line); m != nil {
			known[m[1]] = true
		}
	}
	return known
}
