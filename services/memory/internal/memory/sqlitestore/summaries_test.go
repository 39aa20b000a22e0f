package sqlitestore

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// A listing reads each thread's row and no more: not its turns, whose
// first prompt it shows cut (memory.Preview), nor its initial context. It
// read the first turn of each thread whole, 2 MiB at most, and a client's
// listings of threads that start so took the server past 5 GB.
func TestAListingReadsNoTurns(t *testing.T) {
	path := t.TempDir() + "/memory.db"
	s := open(t, path)
	now := time.Now().UTC()
	prompt := strings.Repeat("é", 512<<10) // 1 MiB
	for range 10 {
		th := chatThread(now)
		th.InitialContext = map[string]any{"prompt": prompt}
		th.Turns = []memory.Turn{{Role: memory.RoleUser, Content: prompt}, {Role: memory.RoleAssistant, Content: prompt}}
		create(t, s, th)
	}
	s.Close()
	s = open(t, path) // nothing of the threads in its cache
	before := procIO(t, "rchar")
	got, err := s.Summaries(context.Background(), memory.ListParams{Limit: 10}, now)
	read := procIO(t, "rchar") - before
	if err != nil || len(got) != 10 || got[0].FirstPrompt != memory.Preview(prompt) {
		t.Fatalf("summaries %d, %v; want 10 showing the prompt's preview", len(got), err)
	}
	if read > 1<<20 {
		t.Errorf("listing 10 threads whose first turns hold 1 MiB read %d KiB; want their rows alone", read>>10)
	}
}

// A thread an older version wrote has no preview kept: its listing reads
// its first prompt from its turns, cut as a kept one is.
func TestAnOlderThreadsFirstPromptIsReadFromItsTurns(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/memory.db"
	s := open(t, path)
	now := time.Now().UTC()
	prompt := strings.Repeat("ü", memory.PreviewRunes+1)
	th := chatThread(now)
	th.Turns = []memory.Turn{{Role: memory.RoleAssistant, Content: "an answer first"},
		{Role: memory.RoleUser, Content: prompt}}
	create(t, s, th)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE threads SET preview = NULL`); err != nil {
		t.Fatal(err)
	}
	got, err := s.Summaries(context.Background(), memory.ListParams{Limit: 10}, now)
	if err != nil || len(got) != 1 || got[0].FirstPrompt != memory.Preview(prompt) {
		t.Fatalf("summaries %+v, %v; want the second turn's preview", got, err)
	}
}
