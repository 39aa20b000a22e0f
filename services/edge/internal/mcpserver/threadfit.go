package mcpserver

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// threadAnswerBytes bounds a thread resource's text as it goes out: a JSON
// string, escaped as the SDK escapes it (HTML characters become six bytes
// each). A thread has no bound of its own (an import holds up to 64 MiB),
// and a 36 MB thread of '<' went out as one 216 MB event, built whole for
// each read. More than this is more than an agent's context takes at once
// (Claude Code keeps 25,000 tokens of an answer); the gateway serves the
// whole thread.
const threadAnswerBytes = 256 << 10

// readsEach bounds the thread resources one client (a verified token's, or
// every caller's without tokens) has zen read at once: each read fetches
// the whole thread from memory, however little of it the answer keeps.
const readsEach = 4

// fitThread renders t as the thread resource's JSON, keeping its newest
// turns that fit in limit bytes as they go out. When something does not
// fit, note says what was left out, for the agent. t is changed.
func fitThread(t *memoryv1.Thread, limit int) (text, note string, err error) {
	all := t.GetTurns()
	render := func(turns []*memoryv1.Turn) (string, error) {
		t.Turns = turns
		out, err := protojson.MarshalOptions{UseProtoNames: true, Indent: "  "}.Marshal(t)
		return string(out), err
	}
	var left []string // what the note says is left out
	if bare, err := render(nil); err != nil {
		return "", "", err
	} else if wireLen(bare) > limit {
		t.InitialContext = nil // an import's: a call's arguments are bounded far below
		left = append(left, "its initial context")
	}
	// all[first:] are the newest turns whose compact renderings fit; the
	// whole rendering indents them, so it may keep fewer.
	first, size := len(all), 0
	for first > 0 && proto.Size(all[first-1]) <= limit {
		one, err := protojson.Marshal(all[first-1])
		if err != nil {
			return "", "", err
		}
		if size += wireLen(string(one)); size > limit {
			break
		}
		first--
	}
	for ; first < len(all); first++ {
		if text, err = render(all[first:]); err != nil || wireLen(text) <= limit {
			break
		}
	}
	switch {
	case err != nil:
		return "", "", err
	case first == len(all) && len(all) > 0:
		// Not even the newest turn fits: it goes alone, its text cut.
		var cut string
		if text, cut, err = cutNewest(all[len(all)-1], limit, render); err != nil {
			return "", "", err
		}
		if cut == "" {
			left = append(left, fmt.Sprintf("all %d of its turns", len(all)))
		} else {
			left = append(left, fmt.Sprintf("its %d oldest of %d turns", len(all)-1, len(all)), cut)
		}
	case first == len(all):
		text, err = render(nil)
	case first > 0:
		left = append(left, fmt.Sprintf("its %d oldest of %d turns", first, len(all)))
	}
	if err != nil || len(left) == 0 {
		return text, "", err
	}
	return text, fmt.Sprintf("This conversation is larger than zen answers as a resource (%d KiB): %s left out. "+
		"Read all of it from zen's gateway, where one runs: GET /v1/threads/%s.", limit>>10,
		strings.Join(left, ", and "), t.GetThreadId()), nil
}

// cutNewest renders newest alone, its text cut to fit limit, and says how
// it was cut. When the rest of the turn does not fit (its workflow state,
// its files), it renders no turn and cut is empty.
func cutNewest(newest *memoryv1.Turn, limit int,
	render func([]*memoryv1.Turn) (string, error)) (text, cut string, err error) {
	content := newest.GetContent()
	newest.Content = ""
	alone := proto.Clone(newest).(*memoryv1.Turn)
	newest.Content = content
	bare, err := render([]*memoryv1.Turn{alone})
	if err != nil {
		return "", "", err
	}
	// Seven bytes is the most one byte of text takes, escaped once in the
	// rendering and again in the answer's string.
	room := (limit - wireLen(bare)) / 7
	if room <= 0 {
		text, err = render(nil)
		return text, "", err
	}
	alone.Content = prefix(content, room)
	text, err = render([]*memoryv1.Turn{alone})
	return text, fmt.Sprintf("the newest turn's text after its first %d of %d bytes", len(alone.Content),
		len(content)), err
}

// prefix is s cut to at most n bytes, at a character's start.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// wireLen is at least the length of s as encoding/json writes it, HTML
// escaping on, as the SDK sends a resource's text: quotes, backslashes
// and the common controls take two bytes, other controls, '<', '>', '&',
// U+2028, U+2029 and bytes that are not UTF-8 six.
func wireLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// readers counts each client's thread reads running now.
type readers struct {
	mu      sync.Mutex
	running map[string]int
}

// take holds one of client's readsEach reads, or reports that all are held.
func (r *readers) take(client string) (release func(), ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[client] >= readsEach {
		return nil, false
	}
	if r.running == nil {
		r.running = map[string]int{}
	}
	r.running[client]++
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.running[client]--; r.running[client] == 0 {
			delete(r.running, client)
		}
	}, true
}
