package mcpserver

import (
	"context"
	"fmt"
	"strings"
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

// render is a thread as the resource answers it: compact JSON. Indented,
// a value nested n deep took n² bytes, and a thread of 200 KB nested a
// thousand deep rendered to gigabytes.
func render(t *memoryv1.Thread) (string, error) {
	out, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(t)
	return string(out), err
}

// fitThread renders t as the thread resource's JSON, keeping its newest
// turns that fit in limit bytes as they go out. When something does not
// fit, note says what was left out, for the agent. t is changed. It stops
// when ctx ends: its caller has left.
func fitThread(ctx context.Context, t *memoryv1.Thread, limit int) (text, note string, err error) {
	all := t.GetTurns()
	t.Turns = nil
	var left []string // what the note says is left out
	bare, err := render(t)
	if err != nil {
		return "", "", err
	}
	if wireLen(bare) > limit/2 {
		// An import's: a call's arguments are bounded far below. It would
		// leave the turns no room.
		t.InitialContext = nil
		if bare, err = render(t); err != nil {
			return "", "", err
		}
		left = append(left, "its initial context")
	}
	// The turns' list and its key: `,"turns":[]`, escaped.
	const turnsKey = 16
	first, err := newestThatFit(ctx, all, limit-wireLen(bare)-turnsKey)
	if err != nil {
		return "", "", err
	}
	for ; first < len(all); first++ {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		t.Turns = all[first:]
		if text, err = render(t); err != nil || wireLen(text) <= limit {
			break
		}
	}
	switch {
	case err != nil:
		return "", "", err
	case first == len(all) && len(all) > 0:
		// Not even the newest turn fits: it goes alone, its text cut.
		var cut string
		if text, cut, err = cutNewest(t, all[len(all)-1], limit); err != nil {
			return "", "", err
		}
		if len(all) > 1 {
			left = append(left, fmt.Sprintf("its %d oldest of %d turns", len(all)-1, len(all)))
		}
		left = append(left, cut)
	case first == len(all):
		t.Turns = nil
		text, err = render(t)
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

// newestThatFit is the index of the oldest of the newest turns whose
// renderings fit in room bytes together, one rendering each: the whole's
// may differ by a byte here and there, which fitThread checks.
func newestThatFit(ctx context.Context, all []*memoryv1.Turn, room int) (int, error) {
	first, size := len(all), 0
	for first > 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		// A turn's JSON is at least a ninth of its wire form (a Struct's
		// number takes nine bytes there, one here): past that, it cannot
		// fit, and is not rendered to find out.
		if proto.Size(all[first-1]) > 9*room {
			break
		}
		one, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(all[first-1])
		if err != nil {
			return 0, err
		}
		// wireLen counts two quotes the turn does not have: the comma after
		// it, and the space protojson puts after a comma in some builds.
		if size += wireLen(string(one)); size > room {
			break
		}
		first--
	}
	return first, nil
}

// tooLarge is what the note says of a newest turn left out.
const tooLarge = "its newest turn, too large alone"

// cutNewest renders t with newest alone, its text cut to fit limit, and
// says what was cut. When the rest of the turn does not fit (its workflow
// state, its images), it renders no turn.
func cutNewest(t *memoryv1.Thread, newest *memoryv1.Turn, limit int) (text, cut string, err error) {
	content := newest.GetContent()
	if proto.Size(newest)-len(content) > 9*limit {
		t.Turns = nil
		text, err = render(t)
		return text, tooLarge, err
	}
	newest.Content = "x" // so that the content's key is counted
	alone := proto.Clone(newest).(*memoryv1.Turn)
	newest.Content = content
	t.Turns = []*memoryv1.Turn{alone}
	bare, err := render(t)
	if err != nil {
		return "", "", err
	}
	room := limit - wireLen(bare) + textCost('x')
	for {
		alone.Content = fitting(content, room)
		if text, err = render(t); err != nil {
			return "", "", err
		}
		switch {
		case alone.Content == "":
			// The rest of the turn (its workflow state, its files) does not
			// fit either.
			t.Turns = nil
			text, err = render(t)
			return text, tooLarge, err
		case wireLen(text) <= limit:
			return text, fmt.Sprintf("the newest turn's text after its first %d of %d bytes", len(alone.Content),
				len(content)), nil
		}
		room -= wireLen(text) - limit + 16 // protojson's spacing moves by a byte or two
	}
}

// fitting is the longest start of s, cut at a character's start, whose
// text costs at most room bytes on the wire (textCost).
func fitting(s string, room int) string {
	used := 0
	for i, r := range s {
		if used += textCost(r); used > room {
			return s[:i]
		}
	}
	return s
}

// textCost is what a character of a turn's text takes on the wire:
// escaped by protojson in the thread's JSON, then that JSON escaped by
// encoding/json as the resource's text, HTML escaping on.
func textCost(r rune) int {
	switch {
	case r == '"' || r == '\\':
		return 4 // \" then \\\"
	case r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 3 // \n then \\n
	case r < 0x20:
		return 7 // \u001f then \\u001f
	case r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6
	case r == utf8.RuneError:
		return 6
	}
	return utf8.RuneLen(r)
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
