// Package latency measures call latencies in benchmarks and reports their
// percentiles, so every benchmark states p50 and p99 the same way.
package latency

import (
	"slices"
	"testing"
	"time"
)

// Measure runs fn warmup times untimed, then b.N times timed, and reports
// the p50 and p99 in milliseconds.
func Measure(b *testing.B, warmup int, fn func()) {
	for range warmup {
		fn()
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		fn()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	Report(b, lat)
}

// Report states the p50 and p99 of measured latencies in milliseconds.
func Report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	lat = slices.Sorted(slices.Values(lat))
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
