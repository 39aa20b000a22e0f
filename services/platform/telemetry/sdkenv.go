package telemetry

import "github.com/zenmcp/zen/services/platform/config"

// sdkVariables are the OTEL_ variables the OTLP exporter and the trace SDK
// read for themselves, from the process environment only: where to send
// spans and how, and the batching and limits of what is sent.
var sdkVariables = func() []string {
	var out []string
	for _, signal := range []string{"", "TRACES_"} {
		for _, v := range []string{"ENDPOINT", "HEADERS", "INSECURE", "TIMEOUT", "COMPRESSION", "CERTIFICATE",
			"CLIENT_CERTIFICATE", "CLIENT_KEY"} {
			out = append(out, "OTEL_EXPORTER_OTLP_"+signal+v)
		}
	}
	return append(out, "OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE",
		"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
		"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_SPAN_EVENT_COUNT_LIMIT",
		"OTEL_SPAN_LINK_COUNT_LIMIT", "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT", "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT")
}()

// ForSDK is what the process environment (process) must become for the
// exporter and the SDK to see what zen's own lookup (getenv: the
// environment over .env files, or the files alone when they force it)
// sees: each of their variables whose value differs, "" for one to unset.
// Without it, an endpoint set in a .env file turned export on and the
// exporter sent the spans to its default address.
func ForSDK(getenv, process config.Getenv) map[string]string {
	out := map[string]string{}
	for _, k := range sdkVariables {
		if v := getenv(k); v != process(k) {
			out[k] = v
		}
	}
	return out
}
