package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/telemetry"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// breakerSeries reads the breaker instruments from reader as
// "metric provider scope for" -> value.
func breakerSeries(t *testing.T, reader sdkmetric.Reader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !strings.HasPrefix(m.Name, "zen.breaker") {
				continue
			}
			for _, dp := range sum.DataPoints {
				p, _ := dp.Attributes.Value("provider")
				s, _ := dp.Attributes.Value("scope")
				f, _ := dp.Attributes.Value("for")
				out[m.Name+" "+p.AsString()+" "+s.AsString()+" "+f.AsString()] = dp.Value
			}
		}
	}
	return out
}

// logLines decodes the JSON log lines with message msg.
func logLines(t *testing.T, buf *bytes.Buffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			delete(rec, "time")
			out = append(out, rec)
		}
	}
	return out
}

func TestABreakerOpeningIsALogLineAndAMetric(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	in := telemetry.NewInstrumentsOn(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test"))
	var logs bytes.Buffer
	o := newOneProvider(t, "chat", "", observers{slog.New(slog.NewJSONHandler(&logs, nil)), in})

	o.fake.SetReply(only("fake-broken", fakemodel.Reply{Status: http.StatusNotFound, Message: "no such model"}))
	for range testPolicy.CooldownAfter {
		_, _ = o.call(t, "fake-broken", "chat")
	}
	want := map[string]int64{
		"zen.breaker.opened openai model all": 1,
		"zen.breaker.open openai model all":   1,
	}
	if diff := cmp.Diff(want, breakerSeries(t, reader)); diff != "" {
		t.Errorf("after fake-broken's breaker opened (-want +got):\n%s", diff)
	}
	wantLog := []map[string]any{{
		"level": "WARN", "msg": "breaker open", "provider": "openai", "model": "fake-broken", "scope": "model",
		"failures": float64(testPolicy.CooldownAfter), "cooldown": testPolicy.Cooldown.String(),
		"err": "OpenAI API error for model fake-broken: HTTP 404: no such model",
	}}
	if diff := cmp.Diff(wantLog, logLines(t, &logs, "breaker open")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}

	o.clock.advance(testPolicy.Cooldown)
	o.fake.SetReply(only("nothing", fakemodel.Reply{}))
	if _, err := o.call(t, "fake-broken", "chat"); err != nil {
		t.Fatal(err)
	}
	o.fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Status: http.StatusUnauthorized} })
	for range testPolicy.CooldownAfter {
		_, _ = o.call(t, "fake-good", "chat")
	}
	want = map[string]int64{
		"zen.breaker.opened openai model all":    1,
		"zen.breaker.open openai model all":      0,
		"zen.breaker.opened openai provider all": 1,
		"zen.breaker.open openai provider all":   1,
	}
	if diff := cmp.Diff(want, breakerSeries(t, reader)); diff != "" {
		t.Errorf("after the model recovered and the provider refused the key (-want +got):\n%s", diff)
	}
	if got := logLines(t, &logs, "breaker closed"); len(got) != 1 || got[0]["model"] != "fake-broken" {
		t.Errorf("breaker closed lines: %v", got)
	}
}
