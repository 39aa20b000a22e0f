package telemetry

import (
	"math"
	"strconv"
	"strings"

	"github.com/zenmcp/zen/services/platform/config"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// samplerNamed is the sampler OpenTelemetry names name (the values of
// OTEL_TRACES_SAMPLER zen reads), with ratio for the ratio samplers.
func samplerNamed(name string, ratio float64) (sdktrace.Sampler, bool) {
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample(), true
	case "always_off":
		return sdktrace.NeverSample(), true
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), true
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), true
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), true
	}
	return nil, false
}

// sampler is the sampler OTEL_TRACES_SAMPLER names, read through getenv
// (the environment and zen's .env files, as every other setting) rather
// than by the SDK, which sees the process's environment alone, and
// whether it is the SDK's default (parentbased_always_on), whose
// decisions idsOnly makes. As OpenTelemetry asks, a value zen cannot use
// is reported (warn) and ignored, not fatal: the variable may be set for
// every process of a machine, zen among them.
func sampler(getenv config.Getenv, warn func(msg string, args ...any)) (sdktrace.Sampler, bool) {
	given := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER"))
	name := strings.ToLower(given)
	if name == "" || name == "parentbased_always_on" {
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), true
	}
	ratio := 1.0
	if arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG")); arg != "" && strings.HasSuffix(name, "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || math.IsNaN(r) || r < 0 || r > 1 {
			warn("OTEL_TRACES_SAMPLER_ARG is not a share of traces from 0 to 1; sampling every trace",
				"value", arg)
		} else {
			ratio = r
		}
	}
	s, ok := samplerNamed(name, ratio)
	if !ok {
		warn("OTEL_TRACES_SAMPLER names a sampler zen does not know; using parentbased_always_on"+
			" (zen knows always_on, always_off, traceidratio and their parentbased_ forms)", "value", given)
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), true
	}
	return s, false
}
