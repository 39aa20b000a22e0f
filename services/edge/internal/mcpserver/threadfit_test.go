package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// wireLen must never count less than encoding/json writes, or an answer
// could pass its bound; on plain text it is exact.
func FuzzWireLen(f *testing.F) {
	for _, s := range []string{"", "plain", `"quoted" \\ back`, "<a href='x'>&</a>", "\x00\x01\b\f\n\r\t",
		"\u2028\u2029", "é 漢字 🙂", "\xff\xfe bad", "\xe2\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		wire, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := wireLen(s); got < len(wire) {
			t.Errorf("wireLen(%q) = %d, below the %d bytes encoding/json writes", s, got, len(wire))
		}
	})
}

func TestWireLenIsExactOnPlainText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain words", "tab\tand\nnewline", `a "quote"`, "é 漢字 🙂", "<b>&"} {
		wire, _ := json.Marshal(s)
		if got := wireLen(s); got != len(wire) {
			t.Errorf("wireLen(%q) = %d, want %d", s, got, len(wire))
		}
	}
}

// An initial context larger than the bound (an import's) is left out
// rather than the answer passing the bound.
func TestFitThreadLeavesOutAnInitialContextTooLarge(t *testing.T) {
	t.Parallel()
	initial, err := structpb.NewStruct(map[string]any{"prompt": strings.Repeat("z", 4096)})
	if err != nil {
		t.Fatal(err)
	}
	thread := &memoryv1.Thread{ThreadId: "t1", ToolName: "chat", InitialContext: initial,
		Turns: []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_USER, Content: "hello"}}}
	text, note, err := fitThread(t.Context(), thread, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if n := wireLen(text); n > 1024 {
		t.Errorf("the answer is %d bytes, want at most 1024: %s", n, text)
	}
	if !strings.Contains(text, `"hello"`) || strings.Contains(text, "zzzz") {
		t.Errorf("want the turn kept and the initial context left out: %s", text)
	}
	if !strings.Contains(note, "its initial context") {
		t.Errorf("note = %q, want it to name the initial context", note)
	}
}

// A thread that fits goes out whole, with no note.
func TestFitThreadKeepsAThreadThatFits(t *testing.T) {
	t.Parallel()
	var turns []*memoryv1.Turn
	for i := range 6 {
		turns = append(turns, &memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: fmt.Sprint("turn ", i)})
	}
	text, note, err := fitThread(t.Context(), &memoryv1.Thread{ThreadId: "t1", Turns: turns}, threadAnswerBytes)
	if err != nil || note != "" || strings.Count(text, `"content"`) != 6 {
		t.Errorf("fitThread = %s, note %q, %v; want all six turns and no note", text, note, err)
	}
}

// The work of fitting a thread is bounded by what it answers, not by how
// deep its values nest: rendered indented, a value nested n deep took n²
// bytes, and 200 KB of turns nested a thousand deep took 9 GB and minutes.
func TestFitThreadOfDeepValuesIsCheap(t *testing.T) {
	// Not parallel: it counts the process's allocation.
	var deep any = "bottom"
	for range 900 {
		deep = []any{deep}
	}
	meta, err := structpb.NewStruct(map[string]any{"nested": deep})
	if err != nil {
		t.Fatal(err)
	}
	var turns []*memoryv1.Turn
	for i := range 50 {
		turns = append(turns, &memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, Content: fmt.Sprint("turn ", i),
			ModelMetadata: meta})
	}
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	before := stats.TotalAlloc
	thread := &memoryv1.Thread{ThreadId: "t1", Turns: turns}
	text, _, err := fitThread(t.Context(), thread, threadAnswerBytes)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&stats)
	if used, most := stats.TotalAlloc-before, uint64(64*threadAnswerBytes); used > most {
		t.Errorf("fitting 50 turns nested 900 deep allocated %d bytes, want at most %d", used, most)
	}
	if n := wireLen(text); n > threadAnswerBytes {
		t.Errorf("the answer is %d bytes, past the bound", n)
	}
}

// Text that escapes to seven bytes a byte (controls, escaped in the
// thread's JSON and again in the answer) is cut within the bound, and a
// thread of one turn is not said to have left out "0 oldest" turns.
func TestFitThreadCutsTheNewestTurnWithinTheBound(t *testing.T) {
	t.Parallel()
	for _, text := range []string{strings.Repeat("\x01", 4096), strings.Repeat("<", 4096), strings.Repeat("a", 4096),
		strings.Repeat("\"é", 2048)} {
		thread := &memoryv1.Thread{ThreadId: "t1", Turns: []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_USER, Content: text}}}
		got, note, err := fitThread(t.Context(), thread, 2048)
		if err != nil {
			t.Fatal(err)
		}
		if n := wireLen(got); n > 2048 {
			t.Errorf("%.8q...: the answer is %d bytes on the wire, want at most 2048", text, n)
		}
		if n := wireLen(got); n < 2048-64 {
			t.Errorf("%.8q...: the answer is %d bytes on the wire, want the bound nearly used", text, n)
		}
		if !strings.Contains(note, "the newest turn's text after its first") || strings.Contains(note, "oldest") {
			t.Errorf("%.8q...: note = %q", text, note)
		}
	}
}

// A fit stops when its caller has left.
func TestFitThreadStopsWhenItsCallerLeaves(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	thread := &memoryv1.Thread{ThreadId: "t1", Turns: []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_USER, Content: "q"}}}
	if _, _, err := fitThread(ctx, thread, threadAnswerBytes); err == nil {
		t.Error("a fit whose caller left went on")
	}
}

// A newest turn whose text cannot be cut to fit (the rest of it is too
// large: its workflow state) goes out without turns, and the fit ends.
func TestFitThreadLeavesOutATurnTooLargeWithoutItsText(t *testing.T) {
	t.Parallel()
	state, err := structpb.NewStruct(map[string]any{"notes": strings.Repeat("s", 1500)})
	if err != nil {
		t.Fatal(err)
	}
	thread := &memoryv1.Thread{ThreadId: "t1", Turns: []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_ASSISTANT,
		Content: strings.Repeat("c", 4096), WorkflowState: state}}}
	text, note, err := fitThread(t.Context(), thread, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if n := wireLen(text); n > 1024 || strings.Contains(text, "sss") {
		t.Errorf("the answer (%d bytes) = %s, want no turn within 1024 bytes", n, text)
	}
	if !strings.Contains(note, "its newest turn, too large alone") {
		t.Errorf("note = %q", note)
	}
}
