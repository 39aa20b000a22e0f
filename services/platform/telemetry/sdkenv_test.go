package telemetry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestForSDKCarriesWhatZenSees: a variable the lookup finds in a .env
// file goes to the process environment; one the process already holds
// stays; one a forcing .env file leaves unset is unset; zen's own
// variables are none of the SDK's business.
func TestForSDKCarriesWhatZenSees(t *testing.T) {
	t.Parallel()
	process := map[string]string{
		"OTEL_EXPORTER_OTLP_INSECURE": "true",         // also in the lookup: stays
		"OTEL_BSP_SCHEDULE_DELAY":     "5000",         // the files forced it away
		"OTEL_SERVICE_NAME":           "from-process", // zen reads it itself
	}
	lookup := map[string]string{
		"OTEL_EXPORTER_OTLP_INSECURE":           "true",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":    "http://collector:4317",
		"OTEL_EXPORTER_OTLP_HEADERS":            "api-key=k",
		"OTEL_SERVICE_NAME":                     "from-file",
		"ZEN_MCP_FORCE_ENV_OVERRIDE":            "true",
		"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": "/etc/ca.pem",
	}
	got := ForSDK(func(k string) string { return lookup[k] }, func(k string) string { return process[k] })
	want := map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":    "http://collector:4317",
		"OTEL_EXPORTER_OTLP_HEADERS":            "api-key=k",
		"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": "/etc/ca.pem",
		"OTEL_BSP_SCHEDULE_DELAY":               "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ForSDK (-want +got):\n%s", diff)
	}
}
