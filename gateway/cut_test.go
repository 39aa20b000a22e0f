package gateway

import (
	"testing"
	"time"
)

// TestAWaitReadOutlastsTwoLeases: a read waiting for room cuts off, past
// their lease, the slow reads ahead of it; its wait must outlast two of
// them, or two tokens taking turns at reading nothing keep it refused.
func TestAWaitReadOutlastsTwoLeases(t *testing.T) {
	t.Parallel()
	if two := 2 * (cutLease + cutCheck); two >= servedBodies.roomWait {
		t.Errorf("two slow reads hold the room %s while others wait, past their wait of %s", two,
			servedBodies.roomWait)
	}
}

// TestOnlyASlowReadIsCutOff: a read past its lease is cut off for a
// waiting one only when it goes out slowly: a client that kept a read of
// its own waiting cut another's steady read at 3 MB/s of a large thread,
// again and again, and that reader could never have its thread. The lease
// runs from when the answer's bytes began to go out, not while memory
// reads; the pace is judged over the last seconds the waiting reads
// watched, so a read that sent most of its thread and stalled is cut.
func TestOnlyASlowReadIsCutOff(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	lease := cutLease
	type look struct {
		at   time.Duration // after start
		sent int64
	}
	for _, tc := range []struct {
		name  string
		moved time.Duration // after start; -1: not yet
		looks []look        // the waiting reads' checks; the last one's answer is judged
		stale bool
	}{
		{"a steady read", 0, []look{{lease + time.Second, 30 << 20}}, false},
		{"a read at 6 KB/s", 0, []look{{lease + time.Second, 60 << 10}}, true},
		{"a slow read within its lease", 0, []look{{lease - time.Second, 1}}, false},
		{"a read waiting for memory", -1, []look{{lease + time.Minute, 0}}, false},
		{"a slow read whose answer began after memory's read", 20 * time.Second,
			[]look{{20*time.Second + lease - time.Second, 60 << 10}}, false},
		{"a read that sent its thread at once and stalled", 0, []look{{lease, 29 << 20},
			{lease + time.Second, 29 << 20}, {lease + 5*time.Second, 29 << 20}}, true},
		{"a read going out steadily, watched a while", 0, []look{{lease, 20 << 20},
			{lease + time.Second, 23 << 20}, {lease + 5*time.Second, 29 << 20}}, false},
		{"a read taken in bursts 3 s apart", 0, []look{{lease, 9 << 20}, {lease + time.Second, 9 << 20},
			{lease + 2*time.Second, 18 << 20}, {lease + 5*time.Second, 27 << 20}}, false},
	} {
		a := &sentAnswer{}
		cut := cutOf(a)
		if tc.moved >= 0 {
			a.moved = start.Add(tc.moved)
		}
		var got bool
		for _, l := range tc.looks {
			a.sent = l.sent
			got = cut.Stale(start.Add(l.at))
		}
		if got != tc.stale {
			t.Errorf("%s: stale = %v, want %v", tc.name, got, tc.stale)
		}
	}
	if cut := cutOf(nil); cut.Off != nil {
		t.Error("a read without an answer to cut can be cut")
	}
}

type sentAnswer struct {
	sent  int64
	moved time.Time
}

func (a *sentAnswer) Sent() int64      { return a.sent }
func (a *sentAnswer) Mark()            {}
func (a *sentAnswer) Moved() time.Time { return a.moved }
func (a *sentAnswer) Cut()             {}
