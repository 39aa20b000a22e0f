package grpcapi

import (
	"strings"
	"time"
)

// deltaEvery is how often, at most, Generate sends a delta. Its one reader,
// the executor, counts deltas to report progress once a second; a message
// per provider chunk (a word or two each) was most of what a short call
// cost the router, and many times the reply's size in framing on a long
// one. Done carries the whole reply, so text still waiting when the reply
// ends is not sent as a delta.
const deltaEvery = 200 * time.Millisecond

// deltaBatch gathers a reply's chunks into deltas that go out at most
// every every: a chunk that arrives when one is due goes out with all the
// text held since the last.
type deltaBatch struct {
	every time.Duration
	last  time.Time
	held  strings.Builder
}

// add takes a chunk and reports the text to send now, if one is due.
func (b *deltaBatch) add(chunk string) (string, bool) {
	now := time.Now()
	if now.Sub(b.last) < b.every {
		b.held.WriteString(chunk)
		return "", false
	}
	b.last = now
	if b.held.Len() == 0 {
		return chunk, true
	}
	b.held.WriteString(chunk)
	text := b.held.String()
	b.held.Reset()
	return text, true
}
