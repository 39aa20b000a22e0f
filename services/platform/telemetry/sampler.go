package telemetry

import (
	"fmt"
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
	case "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), true
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), true
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), true
	}
	return nil, false
}

// defaultSampler is the SDK's sampler when none is named, whose decisions
// idsOnly makes.
const defaultSampler = "parentbased_always_on"

// sampler is the sampler OTEL_TRACES_SAMPLER names, read through getenv
// (the environment and zen's .env files, as every other setting) rather
// than by the SDK, which sees the process's environment alone; its name
// tells the default apart.
func sampler(getenv config.Getenv) (sdktrace.Sampler, string, error) {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	if name == "" {
		name = defaultSampler
	}
	ratio := 1.0
	if arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG")); arg != "" && strings.HasSuffix(name, "traceidratio") {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, "", fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want the share of traces to sample, from 0 to 1", arg)
		}
		ratio = r
	}
	s, ok := samplerNamed(name, ratio)
	if !ok {
		return nil, "", fmt.Errorf("OTEL_TRACES_SAMPLER=%q: zen knows always_on, always_off, traceidratio, "+
			"parentbased_always_on, parentbased_always_off and parentbased_traceidratio", name)
	}
	return s, name, nil
}
