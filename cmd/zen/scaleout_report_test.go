package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// What TestScaleOut reads from the load's outcomes, and its table.

// killRow is what one SIGKILL cost.
type killRow struct {
	name, role string
	at         time.Time
	inFlight   int            // calls in flight at the kill
	failed     int            // calls that failed by it: in flight, or sent within killSlack of it
	messages   map[string]int // what their clients were told
}

// scaleSummary is TestScaleOut's verdict and table.
type scaleSummary struct {
	table         string
	calls, ok     int
	lost, dups    int
	lostEg, dupEg []string
	unexplained   []string // failures no kill accounts for, or whose message does not name the killed role
	kills         []killRow
}

// scaleReport goes through every call: whether an acknowledged exchange
// is in its thread once, and which kill, if any, a failure belongs to.
func scaleReport(steady map[string]int, joinedAfter time.Duration, joined bool, kills []kill, results []outcome,
	kept keptWhere) scaleSummary {
	var s scaleSummary
	for _, k := range kills {
		s.kills = append(s.kills, killRow{name: k.name, role: strings.TrimRight(k.name, "-0123456789"), at: k.at,
			messages: map[string]int{}})
	}
	// in says whether o was in flight at row's kill, or sent before its
	// callers could know of it.
	in := func(o outcome, row killRow) bool {
		return o.start.Before(row.at.Add(killSlack)) && !o.end.Before(row.at)
	}
	for i, row := range s.kills {
		for _, o := range results {
			if o.start.Before(row.at) && !o.end.Before(row.at) {
				s.kills[i].inFlight++
			}
		}
	}
	for _, o := range results {
		s.calls++
		where := kept[o.marker]
		if k := where[o.thread]; o.acked() && (k.questions == 0 || k.answers == 0) {
			s.lost++
			s.lostEg = appendSome(s.lostEg, o.marker)
		}
		for _, k := range where {
			if k.questions > 1 || k.answers > 1 {
				s.dups++
				s.dupEg = appendSome(s.dupEg, o.marker)
			}
		}
		row := -1
		for i := range s.kills {
			if in(o, s.kills[i]) {
				row = i
			}
		}
		if o.acked() {
			s.ok++
			continue
		}
		switch {
		case row < 0:
			s.unexplained = append(s.unexplained, fmt.Sprintf("%s (%s): %s", o.marker, o.kind, o.msg))
		case o.kind == kindNoAnswer || o.kind == kindEdgeLost:
			s.unexplained = append(s.unexplained, fmt.Sprintf("%s, near the kill of %s, %s: %s", o.marker,
				s.kills[row].name, o.kind, o.msg))
		case !strings.Contains(o.msg, "zen's "+s.kills[row].role):
			s.unexplained = append(s.unexplained, fmt.Sprintf("%s, failed by the kill of %s, was told %q, which "+
				"does not name the %s", o.marker, s.kills[row].name, o.msg, s.kills[row].role))
		default:
			s.kills[row].failed++
			s.kills[row].messages[o.kind+": "+short(o.msg)]++
		}
	}
	s.table = renderScale(steady, joinedAfter, joined, s)
	return s
}

func renderScale(steady map[string]int, joinedAfter time.Duration, joined bool, s scaleSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d clients, each continuing its own chat thread over two edges; two replicas of each role.\n\n",
		scaleClients)
	fmt.Fprintf(&b, "Calls each replica served in %s of steady load (its /metrics):\n\n", steadyFor)
	b.WriteString("| role | replica 1 | replica 2 | shares |\n|---|---:|---:|---|\n")
	for _, role := range []string{"memory", "router", "executor"} {
		a, c := steady[role+"-1"], steady[role+"-2"]
		fmt.Fprintf(&b, "| %s | %d | %d | %.0f%% / %.0f%% |\n", role, a, c, pct(a, a+c), pct(c, a+c))
	}
	join := fmt.Sprintf("first call %.2f s after it listened", joinedAfter.Seconds())
	if !joined {
		join = fmt.Sprintf("no call within %s", joinBound)
	}
	fmt.Fprintf(&b, "\nA third executor started under load: %s (bound %s).\n\n", join, joinBound)
	b.WriteString("| SIGKILL | calls in flight (all replicas) | failed | what clients were told |\n" +
		"|---|---:|---:|---|\n")
	for _, k := range s.kills {
		var told []string
		for _, m := range slices.Sorted(maps.Keys(k.messages)) {
			told = append(told, fmt.Sprintf("%d × %s", k.messages[m], m))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", k.name, k.inFlight, k.failed, strings.Join(told, "; "))
	}
	fmt.Fprintf(&b, "\n%d calls, %d answered and kept, %d acknowledged turns lost, %d exchanges stored twice, "+
		"%d failures no kill explains.\n", s.calls, s.ok, s.lost, s.dups, len(s.unexplained))
	return b.String()
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
