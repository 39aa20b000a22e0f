// Package latency measures call latencies in benchmarks and reports their
// percentiles, so every benchmark states p50 and p99 the same way, and the
// CPU time calls cost.
package latency

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

// ReportP50 states the p50 of measured latencies in milliseconds as the
// metric unit.
func ReportP50(b *testing.B, lat []time.Duration, unit string) {
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(ms(P50(lat)), unit)
}

// ReportAdded states what calls of one kind add to calls of another, the
// two timed in turn (without[i] beside with[i]): added-p50-ms, the p50 of
// with minus the p50 of without; pair-p50-ms, the p50 of each pair's
// difference; and each kind's p50 (p50-ms for with, without-p50-ms).
func ReportAdded(b *testing.B, without, with []time.Duration) {
	n := min(len(without), len(with))
	if n == 0 {
		return
	}
	diffs := make([]time.Duration, n)
	for i := range n {
		diffs[i] = with[i] - without[i]
	}
	w, wo := P50(with), P50(without)
	b.ReportMetric(ms(w), "p50-ms")
	b.ReportMetric(ms(wo), "without-p50-ms")
	b.ReportMetric(ms(w-wo), "added-p50-ms")
	b.ReportMetric(ms(P50(diffs)), "pair-p50-ms")
}

// P50 is the median of lat, which it leaves as it was.
func P50(lat []time.Duration) time.Duration {
	return slices.Sorted(slices.Values(lat))[len(lat)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// CPU reads what calls cost in CPU time: the process's own, user and
// system (getrusage), clients and fakes included, and the rest of the
// machine's meanwhile (/proc/stat, Linux), which says whether another load
// shared the cores and made the run's times worthless.
type CPU struct{ self, machine time.Duration }

// StartCPU reads the CPU times so far.
func StartCPU(tb testing.TB) CPU {
	tb.Helper()
	return CPU{self: processCPU(tb), machine: machineBusy(tb)}
}

// Report states, per call since c was read: cpu-ms/call, the process's
// CPU time, and other-cpu-ms/call, the CPU time the rest of the machine
// used meanwhile (about zero on a quiet machine; its sampling in ticks
// misses short bursts, so it may even dip below).
func (c CPU) Report(b *testing.B, calls int) {
	if calls <= 0 {
		return
	}
	self, machine := processCPU(b)-c.self, machineBusy(b)-c.machine
	b.ReportMetric(ms(self)/float64(calls), "cpu-ms/call")
	b.ReportMetric(ms(machine-self)/float64(calls), "other-cpu-ms/call")
}

func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTicks is the unit of /proc/stat, USER_HZ, 100 on Linux.
const clockTicks = 100

// machineBusy is the CPU time every core has spent busy since boot: all of
// /proc/stat's first line but idle and iowait.
func machineBusy(tb testing.TB) time.Duration {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		tb.Fatalf("machine CPU time: %v", err)
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	fields := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(fields) < 9 {
		tb.Fatalf("/proc/stat: unexpected first line %q", line)
	}
	var ticks int64
	for i, f := range fields[1:9] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			tb.Fatalf("/proc/stat: %v", err)
		}
		if i != 3 && i != 4 {
			ticks += n
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}
