package memory

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Page is one page of a listing.
type Page struct {
	Summaries []Summary
	Next      string // token of the next page; empty on the last
}

// List returns a page of the client's live threads, newest first.
func (s *Service) List(ctx context.Context, clientID, tool string, size int, token string) (Page, error) {
	switch {
	case size == 0:
		size = 20
	case size < 0 || size > 100:
		return Page{}, fmt.Errorf("%w: page_size %d is outside 1 to 100", ErrInvalid, size)
	}
	after, err := decodeCursor(token)
	if err != nil {
		return Page{}, err
	}
	p := ListParams{ToolName: tool, ClientID: clientID, Limit: size + 1, After: after}
	sums, err := s.store.Summaries(ctx, p, s.now())
	if err != nil {
		return Page{}, fmt.Errorf("list threads: %w", err)
	}
	page := Page{Summaries: sums}
	if len(sums) > size {
		page.Summaries = sums[:size]
		last := page.Summaries[size-1].Thread
		page.Next = encodeCursor(Cursor{UpdatedAt: last.UpdatedAt, ID: last.ID})
	}
	return page, nil
}

func encodeCursor(c Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.UpdatedAt.UnixNano(), 10) + "/" + c.ID))
}

func decodeCursor(token string) (*Cursor, error) {
	if token == "" {
		return nil, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	nanos, id, ok := strings.Cut(string(raw), "/")
	n, perr := strconv.ParseInt(nanos, 10, 64)
	if err != nil || !ok || perr != nil || uuid.Validate(id) != nil {
		return nil, fmt.Errorf("%w: page_token is not one this server returned; start again without it", ErrInvalid)
	}
	return &Cursor{UpdatedAt: time.Unix(0, n).UTC(), ID: id}, nil
}

// Delete removes one of the client's threads.
func (s *Service) Delete(ctx context.Context, id, clientID string) error {
	head, _, err := s.Head(ctx, id, clientID)
	if err != nil {
		return err
	}
	if err := s.store.Delete(ctx, id); err != nil {
		return err
	}
	s.freeWeight(clientID, head.Weight)
	return nil
}

// Branch starts a thread whose history is id's: it has no turns of its
// own yet, and its parent is id.
func (s *Service) Branch(ctx context.Context, id, clientID string) (*Thread, error) {
	parent, _, err := s.Head(ctx, id, clientID)
	if err != nil {
		return nil, err
	}
	return s.Create(ctx, CreateParams{ToolName: parent.ToolName, ParentID: parent.ID, InitialContext: parent.InitialContext, ClientID: clientID})
}

// An import is written whole, while every other write waits, so what it
// may hold is bounded: threads, their turns, and the files they name.
// The gateway stops reading an import at MaxImportThreads too.
const (
	MaxImportThreads = 1_000
	MaxImportTurns   = 10_000
	MaxImportFiles   = MaxFilesPerWrite
)

// importSize refuses an import over the bounds, saying to split it.
func importSize(threads []*Thread) error {
	if len(threads) > MaxImportThreads {
		return fmt.Errorf("%w: an import holds at most %d threads, this one %d: split it", ErrInvalid,
			MaxImportThreads, len(threads))
	}
	turns, files := 0, 0
	for _, t := range threads {
		turns += len(t.Turns)
		for _, turn := range t.Turns {
			files += len(turn.Files)
		}
	}
	switch {
	case turns > MaxImportTurns:
		return fmt.Errorf("%w: an import holds at most %d turns, this one %d: split it", ErrInvalid,
			MaxImportTurns, turns)
	case files > MaxImportFiles:
		return fmt.Errorf("%w: an import's turns name at most %d files, this one's %d: split it", ErrInvalid,
			MaxImportFiles, files)
	}
	return nil
}

// forgetContents keeps the files of imported turns by path and size, not
// by hash. Contents are stored once by their hash for every client, and an
// import carries none: a hash it named would read back what another
// client's call stored, so an import of guesses' hashes would test them
// against that client's files. Their contents are the storing client's.
func forgetContents(turns []Turn) {
	for i := range turns {
		for j := range turns[i].Files {
			turns[i].Files[j].SHA256 = ""
		}
	}
}

// Import stores exported threads as clientID's, all or none. Each must be
// well formed; its expiry restarts from now, since an old export's would
// have passed, and its files are kept without their contents
// (forgetContents). A thread id or a parent of another client's is refused:
// importing never takes over or reaches into someone else's threads.
func (s *Service) Import(ctx context.Context, clientID string, threads []*Thread, replace bool) (int, error) {
	if err := importSize(threads); err != nil {
		return 0, err
	}
	now := s.now().UTC()
	seen := map[string]bool{}
	for i, t := range threads {
		// One spelling of each id, as zen writes them: upper case, braces
		// or a URN would store one thread as another and pass the parent's
		// check, which looks the id up as it is written.
		id, err := uuid.Parse(t.ID)
		if err != nil {
			return 0, fmt.Errorf("%w: thread %d: thread_id %q is not a UUID", ErrInvalid, i+1, t.ID)
		}
		t.ID = id.String()
		if t.ParentID != "" {
			parent, err := uuid.Parse(t.ParentID)
			if err != nil {
				return 0, fmt.Errorf("%w: thread %d (%s): parent_thread_id %q is not a UUID", ErrInvalid, i+1, t.ID,
					t.ParentID)
			}
			t.ParentID = parent.String()
		}
		switch {
		case seen[t.ID]:
			return 0, fmt.Errorf("%w: thread %d: thread_id %s appears twice", ErrInvalid, i+1, t.ID)
		case t.ToolName == "":
			return 0, fmt.Errorf("%w: thread %d (%s): tool_name is required", ErrInvalid, i+1, t.ID)
		case len(t.ToolName) > MaxNameBytes:
			return 0, fmt.Errorf("%w: thread %d (%s): tool_name is %d bytes, over the %d-byte limit", ErrInvalid,
				i+1, t.ID, len(t.ToolName), MaxNameBytes)
		case len(t.Turns) > s.maxTurns:
			return 0, fmt.Errorf("%w: thread %d (%s) has %d turns, over the limit of %d", ErrInvalid, i+1, t.ID, len(t.Turns), s.maxTurns)
		}
		weight, err := validTurns(t.Turns)
		if err != nil {
			return 0, fmt.Errorf("thread %d (%s): %w", i+1, t.ID, err)
		}
		initial, err := validInitialContext(t.InitialContext)
		if err != nil {
			return 0, fmt.Errorf("thread %d (%s): %w", i+1, t.ID, err)
		}
		if t.Weight = weight + initial; t.Weight > MaxThreadWeight {
			return 0, fmt.Errorf("thread %d (%s): %w", i+1, t.ID, tooHeavy(t.Weight))
		}
		seen[t.ID] = true
		forgetContents(t.Turns)
		t.ClientID = clientID
		// Times an export gives ahead of this clock (another machine's)
		// are now: a thread would sort first in its client's list for as
		// long as the clocks differ.
		if t.CreatedAt.IsZero() || t.CreatedAt.After(now) {
			t.CreatedAt = now
		}
		switch {
		case t.UpdatedAt.IsZero():
			t.UpdatedAt = t.CreatedAt
		case t.UpdatedAt.After(now):
			t.UpdatedAt = now
		}
		// The stores keep times as Unix nanoseconds, which wrap before
		// 1678: a thread of 1500 was listed as of 2084, and its page's
		// cursor pointed back at itself.
		if t.CreatedAt.Before(unixEpoch) || t.UpdatedAt.Before(unixEpoch) {
			return 0, fmt.Errorf("%w: thread %d (%s): created_at %s and last_updated_at %s must be from 1970 on",
				ErrInvalid, i+1, t.ID, t.CreatedAt.Format(time.RFC3339), t.UpdatedAt.Format(time.RFC3339))
		}
		t.ExpiresAt = now.Add(s.ttl)
	}
	// Each parent outside the import once, and by its owner alone: reading
	// it whole for each thread that named it let an import of a thousand
	// one-turn threads read a 31 MiB parent a thousand times (56 s).
	checked := map[string]bool{}
	for i, t := range threads {
		if t.ParentID == "" || seen[t.ParentID] || checked[t.ParentID] {
			continue
		}
		checked[t.ParentID] = true
		head, _, err := s.store.Head(ctx, t.ParentID, now)
		if err == nil && head.ClientID != clientID {
			return 0, fmt.Errorf("%w: thread %d (%s): parent_thread_id %s is not one of your threads",
				ErrInvalid, i+1, t.ID, t.ParentID)
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return 0, fmt.Errorf("check parent of thread %d: %w", i+1, err)
		}
	}
	stored, err := s.admitWeight(ctx, clientID, s.importWeight(ctx, clientID, threads, replace, now), now)
	if err != nil {
		return 0, err
	}
	defer stored()
	err = s.store.Import(ctx, threads, replace, now)
	if replace {
		// The threads it replaced were weighed as it read them: a delete
		// of one since left it stored and out of the count.
		s.weighAgain(clientID)
	}
	if err != nil {
		return 0, err
	}
	return len(threads), nil
}

// importWeight is what an import adds to its client's threads: what its
// threads weigh, less what the client's threads it replaces weighed (read
// by their heads, only when the client has a bound to keep).
func (s *Service) importWeight(ctx context.Context, clientID string, threads []*Thread, replace bool,
	now time.Time) int64 {
	var add int64
	for _, t := range threads {
		add += t.Weight + ThreadOverhead
	}
	if !replace || s.quota == nil || s.quota.limit <= 0 || clientID == "" {
		return add
	}
	for _, t := range threads {
		if old, _, err := s.store.Head(ctx, t.ID, now); err == nil && old.ClientID == clientID {
			add -= old.Weight + ThreadOverhead
		}
	}
	return add
}

// unixEpoch is the earliest time a thread may carry.
var unixEpoch = time.Unix(0, 0)
