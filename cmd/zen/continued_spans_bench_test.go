package main

import (
	"cmp"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var benchSpans = flag.Bool("zen.spans", false, "BenchmarkContinuedChat: zen exports its spans to the "+
	"benchmark, which logs the median of each kind the measured calls made: where a call's time goes, hop "+
	"by hop (exporting costs zen time of its own: take the other figures from a run without it)")

// spansEnv has zen export every span to the receiver at addr, in batches
// a tenth of a second apart, none dropped at the loads measured.
func spansEnv(addr string) map[string]string {
	return map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + addr, "OTEL_EXPORTER_OTLP_INSECURE": "true",
		"OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_BSP_MAX_QUEUE_SIZE": "65536",
	}
}

// withSpans adds spansEnv to env when -zen.spans asks for spans, and
// returns the receiver they reach (nil without it).
func withSpans(b *testing.B, env map[string]string) (map[string]string, *receiver) {
	if !*benchSpans {
		return env, nil
	}
	rec, addr := startReceiver(b)
	return mergeEnv(env, spansEnv(addr)), rec
}

// spanKey is a kind of span: what made it, and where.
type spanKey struct{ service, kind, name string }

// logSpans prints, for each kind of span that started within [from, to)
// at least once for every other call, how many did and their median time.
// It prints to stdout, as the results go: a benchmark's log is cut to ten
// lines without -test.v.
func (st *benchStack) logSpans(b *testing.B, from, to time.Time, calls int) {
	// A span ends before its batch goes out: all are in once the exports
	// stop for a while.
	for quiet := time.NewTimer(time.Second); ; quiet.Reset(time.Second) {
		select {
		case <-st.spans.arrived:
			continue
		case <-quiet.C:
		}
		break
	}
	st.spans.mu.Lock()
	took := map[spanKey][]time.Duration{}
	for _, s := range st.spans.spans {
		if s.start.Before(from) || !s.start.Before(to) {
			continue
		}
		k := spanKey{s.service, strings.ToLower(strings.TrimPrefix(s.kind.String(), "SPAN_KIND_")), s.name}
		took[k] = append(took[k], s.end.Sub(s.start))
	}
	st.spans.mu.Unlock()
	keys := make([]spanKey, 0, len(took))
	for k, d := range took {
		if len(d) >= calls/2 {
			keys = append(keys, k)
			slices.Sort(d)
		}
	}
	slices.SortFunc(keys, func(a, b spanKey) int {
		return cmp.Or(cmp.Compare(a.service, b.service), cmp.Compare(took[b][len(took[b])/2], took[a][len(took[a])/2]))
	})
	var out strings.Builder
	fmt.Fprintf(&out, "%s: spans of the %d measured calls, by median:\n", b.Name(), calls)
	for _, k := range keys {
		d := took[k]
		fmt.Fprintf(&out, "  %-12s %-6s %-45s %6d  p50 %4d µs\n", k.service, k.kind, k.name, len(d),
			d[len(d)/2].Microseconds())
	}
	fmt.Print(out.String())
}
