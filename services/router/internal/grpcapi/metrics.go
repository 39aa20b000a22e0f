package grpcapi

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/grpc/status"
)

// otherModel is the model label of every model no catalogue lists, such as
// the vendor/model names OpenRouter accepts: a label per name would let
// clients make series without end.
const otherModel = "other"

// seriesKey names the series of one model's calls with one outcome.
type seriesKey struct{ provider, model, outcome string }

// series are the attribute sets of a seriesKey's measurements, built once:
// an attribute set is sorted and hashed when built, which every call would
// otherwise pay for again.
type series struct {
	calls     []metric.AddOption    // provider, model, outcome
	duration  []metric.RecordOption // the same set
	in, out   []metric.AddOption    // provider, model, direction
	hasTokens bool
}

// seriesCache holds the series made so far; they are bounded by the
// catalogued models (or otherModel) times the status codes.
type seriesCache struct{ m sync.Map }

func (c *seriesCache) get(k seriesKey) *series {
	if s, ok := c.m.Load(k); ok {
		return s.(*series)
	}
	pm := []attribute.KeyValue{attribute.String("provider", k.provider), attribute.String("model", k.model)}
	set := metric.WithAttributeSet(attribute.NewSet(append(pm, attribute.String("outcome", k.outcome))...))
	s := &series{calls: []metric.AddOption{set}, duration: []metric.RecordOption{set}}
	if k.outcome == "ok" {
		s.hasTokens = true
		direction := func(d string) []metric.AddOption {
			return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(append(pm, attribute.String("direction", d))...))}
		}
		s.in, s.out = direction("input"), direction("output")
	}
	got, _ := c.m.LoadOrStore(k, s)
	return got.(*series)
}

// record counts a model call, its duration and its tokens.
func (s *Server) record(ctx context.Context, e routing.Entry, started time.Time, err error, u provider.Usage) {
	outcome := "ok"
	if err != nil {
		outcome = strings.ToLower(status.Code(err).String())
	}
	model := otherModel
	if s.catalogued[catalogueName{e.Provider.Name, e.Name}] {
		model = e.Name
	}
	ser := s.series.get(seriesKey{provider: e.Provider.Name, model: model, outcome: outcome})
	s.metrics.ModelCalls.Add(ctx, 1, ser.calls...)
	s.metrics.ModelDuration.Record(ctx, time.Since(started).Seconds(), ser.duration...)
	if ser.hasTokens {
		s.metrics.ModelTokens.Add(ctx, u.InputTokens, ser.in...)
		s.metrics.ModelTokens.Add(ctx, u.OutputTokens, ser.out...)
	}
}
