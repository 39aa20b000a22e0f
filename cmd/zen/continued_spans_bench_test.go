package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

var benchSpans = flag.Bool("zen.spans", false, "BenchmarkContinuedChat: zen exports its spans to the "+
	"benchmark, which prints the median of each kind the measured calls made: where a call's time goes, "+
	"hop by hop (exporting costs zen time of its own: take the other figures from a run without it)")

// spansWait bounds the wait for the measured calls' spans to arrive, and
// spansEvery is how often each role exports what it has.
const (
	spansWait  = 30 * time.Second
	spansEvery = 100 * time.Millisecond
)

// withSpans returns the environment that has zen export every span to a
// receiver, in batches a tenth of a second apart with room to queue all a
// load makes meanwhile, and the receiver; both nil without -zen.spans.
func withSpans(b *testing.B) (map[string]string, *receiver) {
	if !*benchSpans {
		return nil, nil
	}
	rec, addr := startReceiver(b)
	return map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + addr,
		"OTEL_EXPORTER_OTLP_INSECURE": "true",
		"OTEL_BSP_SCHEDULE_DELAY":     strconv.FormatInt(spansEvery.Milliseconds(), 10),
		"OTEL_BSP_MAX_QUEUE_SIZE":     "65536",
	}, rec
}

// spanKey is a kind of span: the role that made it, its side, its name.
type spanKey struct {
	service string
	kind    tracepb.Span_SpanKind
	name    string
}

// spanSide names a span's kind as a column shows it.
func spanSide(k tracepb.Span_SpanKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "SPAN_KIND_"))
}

// isCall tells the span the edge makes for each MCP request: one per call.
func (k spanKey) isCall() bool {
	return k.kind == tracepb.Span_SPAN_KIND_SERVER && k.name == "POST /mcp"
}

// collectSpans waits for the spans of the calls made within [from, to):
// for the edge's span of every call, and for a few of every role's export
// rounds after the last ended, since each role sends its own. It then
// keeps, for the benchmark's end (printSpans), each kind's count and
// median: the kinds made at least once for every other call, leaving out
// those made once in a while (a model resolved, a health check).
func (st *benchStack) collectSpans(b *testing.B, from, to time.Time, calls int) {
	inWindow := func(s span) bool { return !s.start.Before(from) && s.start.Before(to) }
	arrived := func() bool {
		if time.Since(to) <= 5*spansEvery {
			return false
		}
		st.spans.mu.Lock()
		defer st.spans.mu.Unlock()
		made := 0
		for _, s := range st.spans.spans {
			if inWindow(s) && (spanKey{kind: s.kind, name: s.name}).isCall() {
				made++
			}
		}
		return made >= calls
	}
	waitFor(b, spansWait, fmt.Sprintf("the spans of %d calls (fewer arrived: spans were dropped)", calls), arrived)
	took := map[spanKey][]time.Duration{}
	st.spans.mu.Lock()
	for _, s := range st.spans.spans {
		if inWindow(s) {
			k := spanKey{service: s.service, kind: s.kind, name: s.name}
			took[k] = append(took[k], s.end.Sub(s.start))
		}
	}
	st.spans.mu.Unlock()
	keys := make([]spanKey, 0, len(took))
	for k, d := range took {
		if len(d) >= calls/2 {
			keys = append(keys, k)
			slices.Sort(d)
		}
	}
	median := func(k spanKey) time.Duration { return took[k][len(took[k])/2] }
	slices.SortFunc(keys, func(x, y spanKey) int {
		return cmp.Or(cmp.Compare(x.service, y.service), cmp.Compare(median(y), median(x)))
	})
	var out strings.Builder
	fmt.Fprintf(&out, "%s: spans of the %d measured calls, by median:\n", b.Name(), calls)
	for _, k := range keys {
		fmt.Fprintf(&out, "  %-12s %-6s %-45s %6d  p50 %4d µs\n", k.service, spanSide(k.kind), k.name,
			len(took[k]), median(k).Microseconds())
	}
	st.spanTables = append(st.spanTables, out.String())
}

// printSpans prints the tables collectSpans kept. It runs as the layout's
// benchmark ends, after its results: printed as each result is measured,
// a table would split the result's line, which go test prints in two
// parts, and a benchmark's own log is cut to ten lines without -test.v.
func (st *benchStack) printSpans() {
	for _, t := range st.spanTables {
		fmt.Fprint(os.Stdout, t)
	}
}
