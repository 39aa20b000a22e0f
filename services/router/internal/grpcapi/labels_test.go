package grpcapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// openRouterWithMetrics serves a router whose only provider is OpenRouter
// (which takes any vendor/model name) at fake, recording to reader.
func openRouterWithMetrics(t *testing.T, fake *fakemodel.Server, reader sdkmetric.Reader) routerv1.RouterServiceClient {
	t.Helper()
	reg := onlyProvider(t, "openrouter", "OpenRouter", fake)
	in := telemetry.NewInstrumentsOn(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test"))
	return serveRouter(t, grpcapi.New(reg, fastPolicy, slog.New(slog.DiscardHandler), in))
}

// modelLabels reads, for each zen.model.* instrument, its series count and
// the model label values they carry.
func modelLabels(t *testing.T, reader sdkmetric.Reader) (series map[string]int, labels map[string][]string) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	series, labels = map[string]int{}, map[string][]string{}
	note := func(name string, set attribute.Set) {
		series[name]++
		v, _ := set.Value("model")
		if !slices.Contains(labels[name], v.AsString()) {
			labels[name] = append(labels[name], v.AsString())
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					note(m.Name, dp.Attributes)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					note(m.Name, dp.Attributes)
				}
			}
		}
	}
	for _, v := range labels {
		slices.Sort(v)
	}
	return series, labels
}

func TestModelLabelsComeFromTheCatalogue(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		if r.Model == "vendor/fails" {
			return fakemodel.Reply{Status: http.StatusBadRequest}
		}
		return fakemodel.Reply{Content: "ok"}
	})
	reader := sdkmetric.NewManualReader()
	c := openRouterWithMetrics(t, fake, reader)
	names := []string{"openai/gpt-5", "vendor/fails"}
	for i := range 1000 {
		names = append(names, fmt.Sprintf("vendor-%d/model-%d", i, i))
	}
	for _, name := range names {
		_, _, _ = generate(context.Background(), c, &routerv1.GenerateRequest{Model: name,
			Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}})
	}
	if n := len(fake.Requests()); n != len(names) {
		t.Fatalf("the fake saw %d requests, want one for each of %d names", n, len(names))
	}
	series, labels := modelLabels(t, reader)
	wantLabels := map[string][]string{
		"zen.model.calls":    {"openai/gpt-5", "other"},
		"zen.model.duration": {"openai/gpt-5", "other"},
		"zen.model.tokens":   {"openai/gpt-5", "other"},
	}
	if diff := cmp.Diff(wantLabels, labels); diff != "" {
		t.Errorf("model label values (-want +got):\n%s", diff)
	}
	// Calls and durations: the catalogued model ok, other ok, other failed;
	// tokens: input and output for the two models that answered.
	wantSeries := map[string]int{"zen.model.calls": 3, "zen.model.duration": 3, "zen.model.tokens": 4}
	if diff := cmp.Diff(wantSeries, series); diff != "" {
		t.Errorf("series per instrument after %d model names (-want +got):\n%s", len(names), diff)
	}
}
