package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// checkServiceCredentials: every role reads ZEN_SERVICE_TOKEN from the
// Secret, so the inner gRPC services answer only zen's roles; in prod each
// also talks mutual TLS with certificates from a Secret, and the edge and
// the gateway require client tokens from a Secret.
func checkServiceCredentials(t *testing.T, o objects, prod bool) {
	t.Helper()
	for name, d := range o.deployments {
		c := d.Spec.Template.Spec.Containers[0]
		ref := envFrom(c, "ZEN_SERVICE_TOKEN")
		if ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Name != "zen-secrets" ||
			ref.SecretKeyRef.Key != "ZEN_SERVICE_TOKEN" || ref.SecretKeyRef.Optional != nil && *ref.SecretKeyRef.Optional {
			t.Errorf("%s: ZEN_SERVICE_TOKEN must come, required, from the zen-secrets Secret", name)
		}
		if !prod {
			continue
		}
		if name == "zen-edge" || name == "zen-gateway" {
			if path := envValue(c, "ZEN_AUTH_TOKENS_FILE"); path == "" || !mountedFromSecret(d, c, path) {
				t.Errorf("%s: ZEN_AUTH_TOKENS_FILE=%q must name a tokens file mounted from a Secret", name, path)
			}
		}
		for _, v := range []string{"ZEN_GRPC_TLS_CERT", "ZEN_GRPC_TLS_KEY", "ZEN_GRPC_TLS_CA"} {
			path := envValue(c, v)
			if path == "" || !mountedFromSecret(d, c, path) {
				t.Errorf("%s: %s=%q must name a file mounted from a Secret", name, v, path)
			}
		}
	}
}

func envFrom(c corev1.Container, name string) *corev1.EnvVarSource {
	for _, e := range c.Env {
		if e.Name == name {
			return e.ValueFrom
		}
	}
	return nil
}

func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// mountedFromSecret reports whether path lies in a volume of d that a
// Secret fills.
func mountedFromSecret(d *appsv1.Deployment, c corev1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName != "" {
				return true
			}
		}
	}
	return false
}

// checkTLSProbe: the kubelet's gRPC probe speaks no TLS, so a role on
// mutual TLS is probed by zen health on its own port.
func checkTLSProbe(t *testing.T, name string, probe *corev1.Probe, port int32, readiness bool, service string) {
	t.Helper()
	want := []string{"/zen", "health", "--grpc", fmt.Sprintf("127.0.0.1:%d", port)}
	if readiness {
		want = append(want, "--service", service)
	}
	if probe.GRPC != nil || probe.Exec == nil || !slices.Equal(probe.Exec.Command, want) {
		t.Errorf("%s: with mutual TLS, probe with %q, not %+v", name, want, probe.ProbeHandler)
	}
}
