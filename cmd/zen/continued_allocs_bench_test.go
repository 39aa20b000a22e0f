package main

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// allocTotals are what zen's processes have allocated since they started,
// as runtime.MemStats counts it: unlike CPU time, the same on a busy
// machine as on a quiet one, so a change's effect on allocation reads
// through the machine's drift.
type allocTotals struct {
	bytes, objects uint64
}

// allocs sums the allocation totals of st's zen processes, read from
// each one's heap profile (net/http/pprof prints runtime.MemStats under
// it); zero for a stack without profiling listeners.
func (st *benchStack) allocs(b *testing.B) allocTotals {
	var t allocTotals
	for _, l := range st.pprofs {
		p, err := readAllocTotals(fmt.Sprintf("http://%s/debug/pprof/allocs?debug=1", l.addr))
		if err != nil {
			b.Fatalf("allocation totals of zen's %s at %s: %v", l.role, l.addr, err)
		}
		t.bytes += p.bytes
		t.objects += p.objects
	}
	return t
}

func readAllocTotals(url string) (allocTotals, error) {
	resp, err := http.Get(url)
	if err != nil {
		return allocTotals{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return allocTotals{}, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	var t allocTotals
	var found int
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		into := &t.bytes
		v, ok := strings.CutPrefix(sc.Text(), "# TotalAlloc = ")
		if !ok {
			into = &t.objects
			v, ok = strings.CutPrefix(sc.Text(), "# Mallocs = ")
		}
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return allocTotals{}, fmt.Errorf("%q: %v", sc.Text(), err)
		}
		*into = n
		found++
	}
	if err := sc.Err(); err != nil {
		return allocTotals{}, err
	}
	if found != 2 {
		return allocTotals{}, fmt.Errorf("%s holds no TotalAlloc and Mallocs lines", url)
	}
	return t, nil
}
