package memory

import (
	"context"
	"errors"
	"time"
)

// Errors the service returns; grpcapi maps them to status codes.
var (
	ErrNotFound  = errors.New("thread not found or expired")
	ErrTurnLimit = errors.New("turn limit reached")
	ErrInvalid   = errors.New("invalid request")
)

// Role says who produced a turn.
type Role int

const (
	RoleUnspecified Role = iota
	RoleUser
	RoleAssistant
)

// FileRef names a file a turn used.
type FileRef struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
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
}

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
}

// Store keeps threads. Implementations must make Append atomic: concurrent
// appends to one thread never lose a turn, and a rejected append stores
// nothing.
type Store interface {
	// Create stores a new thread; its id is already set.
	Create(ctx context.Context, t *Thread) error
	// Get returns the thread, or ErrNotFound when it is absent or has expired
	// by now.
	Get(ctx context.Context, id string, now time.Time) (*Thread, error)
	// Append adds turns when the thread would then hold at most maxTurns
	// turns, sets its update time to now and its expiry to expiresAt, and
	// returns the new turn count. Otherwise it returns ErrTurnLimit and
	// changes nothing.
	Append(ctx context.Context, id string, turns []Turn, maxTurns int, now, expiresAt time.Time) (int, error)
	// Close releases the store's resources.
	Close() error
}
