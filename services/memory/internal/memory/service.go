package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/platform/storedjson"
	"github.com/zenmcp/zen/services/platform/tokens"
)

// Service applies the thread rules on top of a Store.
type Service struct {
	store    Store
	ttl      time.Duration
	maxTurns int
	now      func() time.Time
	quota    *clientQuota // nil: no bound (LimitClients)
}

// NewService returns a service keeping threads for ttl after their last
// write, with at most maxTurns turns each.
func NewService(store Store, ttl time.Duration, maxTurns int) *Service {
	return &Service{store: store, ttl: ttl, maxTurns: maxTurns, now: time.Now}
}

// TTL is how long a thread lives after its last write.
func (s *Service) TTL() time.Duration { return s.ttl }

// MaxTurns is the most turns a thread may hold.
func (s *Service) MaxTurns() int { return s.maxTurns }

// CreateParams describes a new thread.
type CreateParams struct {
	ToolName       string
	ParentID       string
	InitialContext map[string]any
	ClientID       string
	Turns          []Turn
	Blobs          []Blob // contents of the files the turns reference
}

// Size caps: a turn's text and a file's contents. Files come from the
// edge, which reads at most 1 MB of each.
const (
	MaxTurnBytes = storedjson.MaxTurnBytes
	MaxBlobBytes = 2 << 20
	// MaxWorkflowStateBytes caps what a turn keeps for its tool's next
	// step (storedjson, whose rule the executor applies before a step's
	// model runs); a step's own text is capped by MaxTurnBytes.
	MaxWorkflowStateBytes = storedjson.MaxWorkflowStateBytes
)

// MaxFilesPerWrite bounds the distinct files the turns of one write (a
// thread created or imported, an exchange appended) reference. The edge
// reads at most 2,000 for a call; keeping a thread's files alive reads
// them all back, and a Redis store hands them to one script.
const MaxFilesPerWrite = 8_000

// Create starts a thread with a fresh id.
func (s *Service) Create(ctx context.Context, p CreateParams) (*Thread, error) {
	if p.ToolName == "" {
		return nil, fmt.Errorf("%w: tool_name is required", ErrInvalid)
	}
	if len(p.ToolName) > MaxNameBytes {
		return nil, fmt.Errorf("%w: tool_name is %d bytes, over the %d-byte limit", ErrInvalid, len(p.ToolName),
			MaxNameBytes)
	}
	if len(p.Turns) > s.maxTurns {
		return nil, fmt.Errorf("%w: %d turns exceed the limit of %d", ErrInvalid, len(p.Turns), s.maxTurns)
	}
	weight, err := validTurns(p.Turns)
	if err != nil {
		return nil, err
	}
	initial, err := validInitialContext(p.InitialContext)
	if err != nil {
		return nil, err
	}
	if weight += initial; weight > MaxThreadWeight {
		return nil, tooHeavy(weight)
	}
	if err := prepareBlobs(p.Blobs); err != nil {
		return nil, err
	}
	if p.ParentID != "" {
		if _, _, err := s.Head(ctx, p.ParentID, p.ClientID); err != nil {
			return nil, fmt.Errorf("parent %s: %w", p.ParentID, err)
		}
	}
	now := s.now().UTC()
	t := &Thread{
		ID: uuid.NewString(), ParentID: p.ParentID, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(s.ttl), ToolName: p.ToolName, Turns: count(stamp(p.Turns, now)),
		InitialContext: p.InitialContext, ClientID: p.ClientID, Weight: weight,
	}
	stored, err := s.admitWeight(ctx, p.ClientID, weight+ThreadOverhead, now)
	if err != nil {
		return nil, err
	}
	defer stored()
	// Blobs first: a stored turn never names contents that are missing.
	if err := s.store.SaveBlobs(ctx, p.Blobs, now, t.ExpiresAt); err != nil {
		return nil, fmt.Errorf("save files: %w", err)
	}
	if err := s.store.Create(ctx, t); err != nil {
		return nil, fmt.Errorf("create thread: %w", err)
	}
	return t, nil
}

// Head returns a live thread the client may read, without its turns, and
// how many it has; not found as Get.
func (s *Service) Head(ctx context.Context, id, clientID string) (*Thread, int, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, 0, ErrNotFound
	}
	t, n, err := s.store.Head(ctx, id, s.now())
	if err != nil {
		return nil, 0, err
	}
	if t.ClientID != clientID {
		return nil, 0, ErrNotFound
	}
	return t, n, nil
}

// MaxExchangeIDBytes bounds an exchange id: the edge sends a UUID.
const MaxExchangeIDBytes = 128

// Append adds one exchange's turns, all or none, and refreshes the TTL of
// the thread and of every file it references. ex.ID, when set, makes a
// repeated append of the same exchange (a retried save) store nothing.
func (s *Service) Append(ctx context.Context, id, clientID string, ex Exchange, turns []Turn,
	blobs []Blob) (int, error) {
	if len(turns) == 0 {
		return 0, fmt.Errorf("%w: no turns to append", ErrInvalid)
	}
	if len(ex.ID) > MaxExchangeIDBytes {
		return 0, fmt.Errorf("%w: exchange_id is %d bytes, over the %d-byte limit", ErrInvalid, len(ex.ID),
			MaxExchangeIDBytes)
	}
	weight, err := validTurns(turns)
	if err != nil {
		return 0, err
	}
	if err := prepareBlobs(blobs); err != nil {
		return 0, err
	}
	if _, err := uuid.Parse(id); err != nil {
		return 0, ErrNotFound
	}
	now := s.now().UTC()
	stored, err := s.admitWeight(ctx, clientID, weight, now)
	if err != nil {
		return 0, err
	}
	defer stored()
	if err := s.store.SaveBlobs(ctx, blobs, now, now.Add(s.ttl)); err != nil {
		return 0, fmt.Errorf("save files: %w", err)
	}
	ex.Weight = weight
	ex.StateOf = stateOf(turns)
	n, err := s.store.Append(ctx, id, clientID, ex, count(stamp(turns, now)), s.maxTurns, now, now.Add(s.ttl))
	if errors.Is(err, ErrThreadFull) {
		err = noRoom(weight)
	}
	return n, err
}

// stateOf is the tool whose workflow state turns keep, "" for none.
func stateOf(turns []Turn) string {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].WorkflowState != nil {
			return turns[i].ToolName
		}
	}
	return ""
}

// Warnings are conditions that put the store's threads at risk, such as a
// Redis that keeps nothing on disk, worded to follow "memory"; none for
// stores that report nothing.
func (s *Service) Warnings() []string {
	if w, ok := s.store.(interface{ Warnings() []string }); ok {
		return w.Warnings()
	}
	return nil
}

// countedEncodings are counted when text is written: the encoding most
// OpenAI models use. A selection for another encoding counts short texts
// and bounds long ones (tokensOf); the estimate, for every other model, it
// reads from the text's length, so it is not stored.
var countedEncodings = []string{tokens.O200k}

func tokenCounts(text string) map[string]int64 {
	m := make(map[string]int64, len(countedEncodings))
	for _, enc := range countedEncodings {
		m[enc] = tokens.Count(enc, text)
	}
	return m
}

func count(turns []Turn) []Turn {
	for i := range turns {
		turns[i].Tokens = tokenCounts(turns[i].Content)
	}
	return turns
}

// prepareBlobs checks each blob's hash and size and counts its tokens.
func prepareBlobs(blobs []Blob) error {
	for i := range blobs {
		b := &blobs[i]
		if len(b.Content) > MaxBlobBytes {
			return fmt.Errorf("%w: file %s is %d bytes, over the %d-byte limit", ErrInvalid, b.SHA256, len(b.Content), MaxBlobBytes)
		}
		sum := sha256.Sum256([]byte(b.Content))
		if hex.EncodeToString(sum[:]) != b.SHA256 {
			return fmt.Errorf("%w: file contents do not match their sha256 %q", ErrInvalid, b.SHA256)
		}
		b.Tokens = tokenCounts(b.Content)
	}
	return nil
}

// validTurns checks turns and returns what they weigh (see
// MaxThreadWeight).
func validTurns(turns []Turn) (int64, error) {
	files := map[string]bool{}
	var weight int64
	for i, t := range turns {
		if t.Role != RoleUser && t.Role != RoleAssistant {
			return 0, fmt.Errorf("%w: turn %d has no role", ErrInvalid, i)
		}
		if err := validName(i, "tool_name", t.ToolName); err != nil {
			return 0, err
		}
		if err := validName(i, "model_name", t.ModelName); err != nil {
			return 0, err
		}
		if err := validName(i, "model_provider", t.ModelProvider); err != nil {
			return 0, err
		}
		if len(t.Content) > MaxTurnBytes {
			return 0, fmt.Errorf("%w: turn %d is %d bytes, over the %d-byte limit for one turn", ErrInvalid, i,
				len(t.Content), MaxTurnBytes)
		}
		state, err := validWorkflowState(i, t.WorkflowState)
		if err != nil {
			return 0, err
		}
		metadata, err := jsonWithin(t.ModelMetadata, MaxTurnBytes, fmt.Sprintf("turn %d's model_metadata", i), "")
		if err != nil {
			return 0, err
		}
		for _, f := range t.Files {
			if files[f.SHA256] = true; len(files) > MaxFilesPerWrite {
				return 0, fmt.Errorf("%w: the turns reference more than %d distinct files, the limit for one write: "+
					"split them over more exchanges or threads", ErrInvalid, MaxFilesPerWrite)
			}
		}
		weight += turnWeight(t) + state + metadata
	}
	return weight, nil
}

// validName checks the size of turn i's name what.
func validName(i int, what, name string) error {
	if len(name) > MaxNameBytes {
		return fmt.Errorf("%w: turn %d's %s is %d bytes, over the %d-byte limit", ErrInvalid, i, what, len(name),
			MaxNameBytes)
	}
	return nil
}

// validInitialContext checks the size of a thread's first call's
// arguments, which a branch copies: a turn's worth at most (MaxTurnBytes),
// as JSON. Unchecked, a branch request of a hundred bytes stored tens of
// megabytes an import had put there.
func validInitialContext(initial map[string]any) (int64, error) {
	return jsonWithin(initial, storedjson.MaxContextBytes, "the initial context", "")
}

// validWorkflowState checks the size of what turn i keeps for its tool's
// next step, and returns its weight. Only workflow tools keep any: a
// chat's append measures nothing.
func validWorkflowState(i int, state map[string]any) (int64, error) {
	if state == nil {
		return 0, nil
	}
	return jsonWithin(state, MaxWorkflowStateBytes,
		fmt.Sprintf("turn %d's workflow state (every step's findings so far)", i),
		": send shorter findings, or go on in a new thread")
}

// MaxNameBytes bounds a name a thread or turn carries: a tool's, a
// model's, a provider's. Zen's are tens of bytes.
const MaxNameBytes = 256

// MaxValues and MaxNesting bound a value memory stores as JSON: an
// initial context, a workflow state, a turn's model metadata (storedjson,
// whose rule the edge applies to a call's arguments before its model runs).
const (
	MaxValues  = storedjson.MaxValues
	MaxNesting = storedjson.MaxNesting
)

// jsonWithin refuses v when it is past storedjson's rule (its shape, and
// limit bytes as JSON); what names it in the error, and fix, when set,
// says what to do. It returns v's weight (see MaxThreadWeight).
func jsonWithin(v map[string]any, limit int, what, fix string) (int64, error) {
	if v == nil {
		return 0, nil
	}
	values, bytes, why := storedjson.Measure(v, limit)
	if why != "" {
		return 0, fmt.Errorf("%w: %s is %s%s", ErrInvalid, what, why, fix)
	}
	return int64(bytes) + int64(values)*ValueWeight, nil
}

// stamp gives turns without a timestamp the write time.
func stamp(turns []Turn, now time.Time) []Turn {
	out := make([]Turn, len(turns))
	for i, t := range turns {
		if t.Timestamp.IsZero() {
			t.Timestamp = now
		}
		out[i] = t
	}
	return out
}
