package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors the service returns; grpcapi maps them to status codes.
var (
	ErrNotFound  = errors.New("thread not found or expired")
	ErrTurnLimit = errors.New("turn limit reached")
	ErrInvalid   = errors.New("invalid request")
	ErrExists    = errors.New("thread already exists")
	// ErrOwned is a thread id that another client's thread holds: an
	// import never takes it over, replace or not.
	ErrOwned = errors.New("thread belongs to another client")
	// ErrUnavailable is a store that cannot be reached or is busy; the
	// same call may succeed later.
	ErrUnavailable = errors.New("memory store unavailable")
	// ErrFull is a store with no room for a write: a Redis at its
	// maxmemory under noeviction, or a full disk under SQLite. Nothing of
	// the write was stored; the same write fails until an operator makes
	// room, while reads go on working.
	ErrFull = errors.New("memory store full")
	// ErrThreadFull is an append that would take its thread past
	// MaxThreadWeight; nothing of it was stored.
	ErrThreadFull = errors.New("thread full")
	// ErrMoved is a workflow's step that was to follow the state its call
	// saw (Exchange.Unchanged), after another state of the tool was
	// stored; nothing of it was stored.
	ErrMoved = errors.New("thread moved on")
	// ErrGone is a store whose file was removed or replaced while it ran:
	// it stores nothing more until it is opened again.
	ErrGone = errors.New("memory store's file is gone")
)

// LostError is a thread that is missing after its store lost data (a Redis
// that restarted without persistence, or was flushed): the client is told
// so instead of that it expired. It is also ErrNotFound, so code that only
// asks whether a thread is there need not know.
type LostError struct {
	At time.Time // when the loss was noticed
}

func (e *LostError) Error() string {
	return "thread not found: the memory store lost its data at " + e.At.UTC().Format("2006-01-02 15:04:05 MST")
}

// Is makes a lost thread ErrNotFound too.
func (e *LostError) Is(target error) bool { return target == ErrNotFound }

// Role says who produced a turn.
type Role int

const (
	RoleUnspecified Role = iota
	RoleUser
	RoleAssistant
)

// FileRef names a file a turn used; its contents are a Blob.
type FileRef struct {
	Path     string    `json:"path"`
	SHA256   string    `json:"sha256"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified,omitzero"`
}

// Blob is a file's contents, stored once per sha256, with its token
// counts by encoding.
type Blob struct {
	SHA256  string           `json:"sha256"`
	Content string           `json:"content"`
	Tokens  map[string]int64 `json:"tokens,omitempty"`
}

// BlobHead is a blob without its content: what a selection weighs a file
// by before it reads the content of those it keeps.
type BlobHead struct {
	// Bytes is the content's length; -1 when the store does not know it
	// without reading the content (a blob an older version stored).
	Bytes  int64
	Tokens map[string]int64
}

// Turn is one message of a conversation.
type Turn struct {
	Role          Role           `json:"role"`
	Content       string         `json:"content"`
	Timestamp     time.Time      `json:"timestamp"`
	Files         []FileRef      `json:"files,omitempty"`
	Images        []string       `json:"images,omitempty"`
	ToolName      string         `json:"tool_name,omitempty"`
	ModelProvider string         `json:"model_provider,omitempty"`
	ModelName     string         `json:"model_name,omitempty"`
	ModelMetadata map[string]any `json:"model_metadata,omitempty"`
	// WorkflowState is what the tool that wrote the turn keeps for its next
	// step: the executor's, stored and returned unread.
	WorkflowState map[string]any `json:"workflow_state,omitempty"`
	// ContextWindow is the context window the turn's model had when it
	// wrote the turn (see Served): a call that inherits the model gets its
	// history selected in the same read as the rest of what it needs.
	ContextWindow int64 `json:"context_window,omitempty"`
	// Tokens are the content's token counts by encoding, made when the
	// turn was written so selection need not tokenize again.
	Tokens map[string]int64 `json:"tokens,omitempty"`
}

// Exchange names the call whose turns an append stores, so that a retry
// of the append is known: the edge makes one for each call and sends the
// same one when it retries.
type Exchange struct {
	// ID is the exchange's name; empty for an append no retry repeats.
	ID string
	// After is the thread's turn count when the call was prepared
	// (PrepareCallResponse.turn_count): a stored attempt of the exchange
	// begins at or after that turn, so a store need look no further back
	// for it. 0 means from the start; a count past the truth can make a
	// retry be stored again.
	After int
	// Weight is what the turns weigh (see MaxThreadWeight): the thread's
	// weight grows by it, and an append that would take it past
	// MaxThreadWeight is ErrThreadFull.
	Weight int64
	// StateOf is the tool whose workflow state the turns keep, "" for none
	// (Service.Append sets it). With Unchanged set, an append of a state
	// is ErrMoved when another state of the same tool was stored after the
	// After turns the call saw, unless the thread holds this exchange (a
	// retry): a workflow's step builds on the state of the step before.
	StateOf   string
	Unchanged bool
}

// ChecksState reports whether an append of ex must find no other state of
// its tool after ex.After (see StateOf).
func (ex Exchange) ChecksState() bool { return ex.Unchanged && ex.StateOf != "" }

// Thread is a conversation named by its id.
type Thread struct {
	ID             string         `json:"thread_id"`
	ParentID       string         `json:"parent_thread_id,omitempty"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"last_updated_at"`
	ExpiresAt      time.Time      `json:"expires_at"`
	ToolName       string         `json:"tool_name"`
	Turns          []Turn         `json:"turns"`
	InitialContext map[string]any `json:"initial_context,omitempty"`
	ClientID       string         `json:"client_id,omitempty"`
	// Weight is what the thread weighs (see MaxThreadWeight), set by the
	// service for Create and Import and kept by the store, which adds each
	// append's and returns it with the thread.
	Weight int64 `json:"-"`
}

// Store keeps threads. Implementations must make Append atomic: concurrent
// appends to one thread never lose a turn, and a rejected append stores
// nothing.
type Store interface {
	// Create stores a new thread; its id is already set.
	Create(ctx context.Context, t *Thread) error
	// Get returns the thread, or ErrNotFound when it is absent or has expired
	// by now. The caller owns the thread and its Turns slice (its initial
	// context, and the maps and slices inside a turn, may be shared, and
	// are read only).
	Get(ctx context.Context, id string, now time.Time) (*Thread, error)
	// Head returns the thread without its turns, and how many it has,
	// without reading them; ErrNotFound as Get.
	Head(ctx context.Context, id string, now time.Time) (*Thread, int, error)
	// GetWithin is Get of a thread that weighs at most max
	// (Thread.Weight). Of a heavier one it returns the thread without its
	// turns, having read none, and heavier: a reader makes room for what a
	// thread weighs before it reads it whole, and reads the usual thread,
	// light, in one store read.
	GetWithin(ctx context.Context, id string, now time.Time, max int64) (t *Thread, heavier bool, err error)
	// Append adds turns to the client's thread when it would then hold at
	// most maxTurns turns, sets its update time to now and its expiry, and
	// that of every blob its turns reference, to expiresAt, and returns the
	// new turn count. Otherwise it returns the thread's turn count with
	// ErrTurnLimit and changes nothing; and the same with ErrThreadFull
	// when the thread's weight and ex.Weight add up past MaxThreadWeight
	// (the turn limit first). Another client's thread is ErrNotFound.
	// ex, when its ID is set, names the exchange: when the thread already
	// holds it, the append is a retry of one that was stored, and Append
	// changes nothing and returns the turn count, limits or not. A store
	// may look for it only among the turns from ex.After on: a retry whose
	// first attempt began before that is stored again.
	Append(ctx context.Context, id, clientID string, ex Exchange, turns []Turn, maxTurns int,
		now, expiresAt time.Time) (int, error)
	// Summaries returns live threads (expiring after now) matching p, most
	// recently updated first (ties by id, descending), strictly after
	// p.After when it is set: each without its turns, with their count and
	// its first prompt instead, which is all a listing shows. Nothing lists
	// threads with their turns: one page of them could weigh gigabytes, so
	// a reader weighs each thread before reading it (Service.Weigh).
	Summaries(ctx context.Context, p ListParams, now time.Time) ([]Summary, error)
	// ClientWeight is what the client's live threads (expiring after now)
	// weigh together, each its Thread.Weight and ThreadOverhead: a read of
	// each of them, for the per-client bound (Service.LimitClients), which
	// asks rarely.
	ClientWeight(ctx context.Context, clientID string, now time.Time) (int64, error)
	// Delete removes a thread; ErrNotFound when there is none.
	Delete(ctx context.Context, id string) error
	// SaveBlobs stores blobs and makes them live until at least expiresAt.
	SaveBlobs(ctx context.Context, blobs []Blob, now, expiresAt time.Time) error
	// GetBlobs returns the live blobs among shas; absent ones are left out.
	GetBlobs(ctx context.Context, shas []string, now time.Time) (map[string]Blob, error)
	// BlobHeads is GetBlobs without the content, which it does not read.
	BlobHeads(ctx context.Context, shas []string, now time.Time) (map[string]BlobHead, error)
	// Import stores threads as they are, all or none. A thread whose id
	// exists fails the import with ErrExists unless replace is set and the
	// stored thread has the same ClientID; one of another client fails it
	// with ErrOwned whatever replace says, and is left as it was. now is
	// when they are stored: a store whose keys live a time of their own
	// keeps each until its ExpiresAt as seen from now, not from its
	// UpdatedAt, which an export may have set long ago or ahead of this
	// clock.
	Import(ctx context.Context, threads []*Thread, replace bool, now time.Time) error
	// Close releases the store's resources.
	Close() error
}

// Summary is what a listing shows of a thread.
type Summary struct {
	Thread    Thread // without its turns
	TurnCount int
	// FirstPrompt is the Preview of the first user turn among the first
	// two: a thread starts with the user's turn (an import may put an
	// assistant's first), and reading further would cost a listing more.
	FirstPrompt string
}

// FirstPrompt is a Summary's FirstPrompt of a thread's first turns.
func FirstPrompt(turns []Turn) string {
	for _, t := range turns[:min(2, len(turns))] {
		if t.Role == RoleUser {
			return Preview(t.Content)
		}
	}
	return ""
}

// FirstPromptAfter is the FirstPrompt of a thread of one turn that is not
// the user's once turns are appended to it: the first of those, if the
// user's. (One of no turns takes FirstPrompt(turns); one whose first turn
// is the user's keeps its own.)
func FirstPromptAfter(turns []Turn) string {
	if len(turns) > 0 && turns[0].Role == RoleUser {
		return Preview(turns[0].Content)
	}
	return ""
}

// PreviewRunes is how much of a thread's first prompt a listing shows.
// Stores keep that much beside the thread, so that a listing reads a
// constant amount of each thread, whatever its turns hold.
const PreviewRunes = 200

// Preview is s cut to PreviewRunes runes, the cut marked with "…".
func Preview(s string) string {
	if len(s) <= PreviewRunes { // no more runes than bytes
		return s
	}
	n := 0
	for i := range s {
		if n == PreviewRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// Summarize is the summary of a whole thread, for stores that hold its
// turns in hand.
func Summarize(t *Thread) Summary {
	s := Summary{Thread: *t, TurnCount: len(t.Turns), FirstPrompt: FirstPrompt(t.Turns)}
	s.Thread.Turns = nil
	return s
}

// ListParams selects a page of threads.
type ListParams struct {
	ToolName string // empty for every tool
	ClientID string
	Limit    int
	After    *Cursor // nil for the first page
}

// Cursor is the position of the last thread of a page.
type Cursor struct {
	UpdatedAt time.Time
	ID        string
}

// Before reports whether t sorts after the cursor in newest-first order.
func (c *Cursor) Before(t *Thread) bool {
	if c == nil {
		return true
	}
	if !t.UpdatedAt.Equal(c.UpdatedAt) {
		return t.UpdatedAt.Before(c.UpdatedAt)
	}
	return t.ID < c.ID
}

// Newer orders threads newest first, ties by id descending: the order List
// returns.
func Newer(a, b *Thread) int {
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// ImportClash is the one rule for importing t over a stored thread held by
// owner (exists false: none is): another client's thread is never taken
// over, and the importer's own is replaced only when asked. Every store
// applies it; Redis's put script mirrors it, atomically.
func ImportClash(t *Thread, owner string, exists, replace bool) error {
	switch {
	case !exists:
		return nil
	case owner != t.ClientID:
		return fmt.Errorf("%w: %s", ErrOwned, t.ID)
	case !replace:
		return fmt.Errorf("%w: %s", ErrExists, t.ID)
	}
	return nil
}
