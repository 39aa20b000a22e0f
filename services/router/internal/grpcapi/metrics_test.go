package grpcapi_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// modelPoint is one series of a zen.model.* instrument and its value (a
// count, a sum of tokens, or a number of durations recorded).
type modelPoint struct {
	Metric, Provider, Model, Outcome, Direction string
	Value                                       int64
}

// TestModelMetricsSeries: each call counts once under its provider, model
// and outcome, with its duration, and an answered call's tokens count by
// direction; the same series take the calls that follow.
func TestModelMetricsSeries(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		if r.Model == "vendor/fails" {
			return fakemodel.Reply{Status: http.StatusBadRequest}
		}
		return fakemodel.Reply{Content: "ok", PromptTokens: 7, CompletionTokens: 3}
	})
	reader := sdkmetric.NewManualReader()
	c := openRouterWithMetrics(t, fake, reader)
	for _, name := range []string{"openai/gpt-5", "openai/gpt-5", "vendor/fails"} {
		_, _, _ = generate(context.Background(), c, &routerv1.GenerateRequest{Model: name,
			Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}})
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var got []modelPoint
	add := func(name string, set attribute.Set, value int64) {
		label := func(k string) string { v, _ := set.Value(attribute.Key(k)); return v.String() }
		got = append(got, modelPoint{Metric: name, Provider: label("provider"), Model: label("model"),
			Outcome: label("outcome"), Direction: label("direction"), Value: value})
		if set.Len() != 3 {
			t.Errorf("%s has labels %v, want provider, model and outcome or direction", name, set.ToSlice())
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					add(m.Name, dp.Attributes, dp.Value)
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					add(m.Name, dp.Attributes, int64(dp.Count))
				}
			}
		}
	}
	sort.Slice(got, func(i, j int) bool { return fmt.Sprint(got[i]) < fmt.Sprint(got[j]) })
	want := []modelPoint{
		{"zen.model.calls", "openrouter", "openai/gpt-5", "ok", "", 2},
		{"zen.model.calls", "openrouter", "other", "failedprecondition", "", 1},
		{"zen.model.duration", "openrouter", "openai/gpt-5", "ok", "", 2},
		{"zen.model.duration", "openrouter", "other", "failedprecondition", "", 1},
		{"zen.model.tokens", "openrouter", "openai/gpt-5", "", "input", 14},
		{"zen.model.tokens", "openrouter", "openai/gpt-5", "", "output", 6},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model series (-want +got):\n%s", diff)
	}
}
