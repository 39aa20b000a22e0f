package main

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// What TestFaultsBetweenRoles reads back from the threads, and its table.

// keptCount is how often one exchange's question and answer are in one
// thread.
type keptCount struct{ questions, answers int }

// keptWhere maps each exchange's marker to the threads holding it.
type keptWhere map[string]map[string]keptCount

// readKept reads every thread through the gateway, and counts each
// exchange's question and answer in each. Every thread, not only those the
// clients know of: a retried creation could leave a copy in a thread
// nobody was told of.
func readKept(t *testing.T, gateway string, results []outcome) keptWhere {
	t.Helper()
	ids := map[string]bool{}
	for _, o := range results {
		if o.thread != "" {
			ids[o.thread] = true
		}
	}
	token := ""
	for range 100 {
		code, body := getJSON(t, gateway+"/v1/threads?page_size=100&page_token="+url.QueryEscape(token))
		if code != 200 {
			t.Errorf("GET /v1/threads = %d %v", code, body)
			break
		}
		threads, _ := body["threads"].([]any)
		for _, th := range threads {
			id, _ := th.(map[string]any)["thread_id"].(string)
			ids[id] = true
		}
		if token, _ = body["next_page_token"].(string); token == "" {
			break
		}
	}
	kept := keptWhere{}
	for id := range ids {
		code, body := getJSON(t, gateway+"/v1/threads/"+id)
		if code != 200 {
			t.Errorf("GET /v1/threads/%s = %d %v", id, code, body)
			continue
		}
		thread, _ := body["thread"].(map[string]any)
		turns, _ := thread["turns"].([]any)
		for _, turn := range turns {
			content, _ := turn.(map[string]any)["content"].(string)
			marker := markerRE.FindString(content)
			if kept[marker] == nil {
				kept[marker] = map[string]keptCount{}
			}
			k := kept[marker][id]
			switch content {
			case "question " + marker:
				k.questions++
			case "answer for " + marker:
				k.answers++
			}
			kept[marker][id] = k
		}
	}
	return kept
}

// faultRow is one fault's figures.
type faultRow struct {
	name                      string
	start                     time.Time // when the fault began
	calls, ok, notSaved       int
	errors                    int
	messages                  map[string]int // error kind and message → count
	lost, dups, storedUnacked int
	copies                    int // exchanges also stored in a thread other than their own
	lostEg, dupEg             []string
	firstOK, allOK            time.Duration // after the fault ended; -1 when none came
	slowest                   time.Duration
}

func tabulate(runs []phaseRun, results []outcome, kept keptWhere) []faultRow {
	rows := make([]faultRow, len(runs))
	for i, run := range runs {
		rows[i] = faultRow{name: run.name, start: run.start, messages: map[string]int{}, firstOK: -1, allOK: -1}
	}
	firstAfter := make([]map[int]time.Duration, len(runs)) // per client, its first kept answer after the fault
	for i := range firstAfter {
		firstAfter[i] = map[int]time.Duration{}
	}
	for _, o := range results {
		row := &rows[o.phase]
		row.calls++
		row.slowest = max(row.slowest, o.end.Sub(o.start))
		switch o.kind {
		case kindOK:
			row.ok++
		case kindNotSaved:
			row.notSaved++
			row.messages[o.kind+": "+short(o.msg)]++
		default:
			row.errors++
			row.messages[o.kind+": "+short(o.msg)]++
		}
		where := kept[o.marker]
		switch k := where[o.thread]; {
		case o.acked() && (k.questions == 0 || k.answers == 0):
			row.lost++
			row.lostEg = appendSome(row.lostEg, o.marker)
		case !o.acked() && len(where) > 0:
			row.storedUnacked++
		}
		for _, k := range where {
			if k.questions > 1 || k.answers > 1 {
				row.dups++
				row.dupEg = appendSome(row.dupEg, fmt.Sprintf("%s ×%d", o.marker, max(k.questions, k.answers)))
			}
		}
		if len(where) > 1 {
			row.copies += len(where) - 1
		}
	}
	// Recovery counts calls started after the fault ended, whichever phase
	// the load was in by then.
	for i, run := range runs {
		for _, o := range results {
			if !o.acked() || o.start.Before(run.over) {
				continue
			}
			d := o.end.Sub(run.over)
			if prev, ok := firstAfter[i][o.client]; !ok || d < prev {
				firstAfter[i][o.client] = d
			}
		}
		for _, d := range firstAfter[i] {
			if rows[i].firstOK < 0 || d < rows[i].firstOK {
				rows[i].firstOK = d
			}
			rows[i].allOK = max(rows[i].allOK, d)
		}
		if len(firstAfter[i]) < faultClients {
			rows[i].allOK = -1
		}
	}
	return rows
}

func appendSome(list []string, s string) []string {
	if len(list) < 5 {
		list = append(list, s)
	}
	return list
}

// short keeps a message's first sentence, for the table.
func short(msg string) string {
	if i := strings.IndexAny(msg, ".;"); i > 0 {
		msg = msg[:i]
	}
	if len(msg) > 110 {
		msg = msg[:110] + "…"
	}
	return msg
}

func renderTable(rows []faultRow, s spans) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d clients, each continuing its own chat thread; faults on the wire last %v, killed processes "+
		"stay down %v.\n\n", faultClients, s.faultFor, s.downFor)
	b.WriteString("| fault | calls | answered, kept | answered, not saved | errors | acknowledged turns lost | " +
		"duplicated exchanges | copies in another thread | kept though the client saw an error | first answer after | " +
		"every client answered after | slowest call |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %s | %s | %s |\n", r.name, r.calls, r.ok,
			r.notSaved, r.errors, r.lost, r.dups, r.copies, r.storedUnacked, seconds(r.firstOK), seconds(r.allOK),
			seconds(r.slowest))
	}
	b.WriteString("\nWhat the clients were told, per fault:\n\n")
	for _, r := range rows {
		if len(r.messages) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s:\n", r.name)
		for _, m := range slices.Sorted(maps.Keys(r.messages)) {
			fmt.Fprintf(&b, "  - %d × %s\n", r.messages[m], m)
		}
	}
	return b.String()
}

func seconds(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}
