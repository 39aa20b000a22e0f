package reply

import (
	"fmt"
	"strings"

	"github.com/zenmcp/zen/services/platform/secrets"
)

// Statuses and content types every tool shares; a tool's own statuses
// (a workflow's pause, resend_prompt, ...) are its own.
const (
	StatusSuccess = "success"
	StatusError   = "error"
	// StatusContinuationAvailable replaces a simple tool's success once its
	// exchange is stored with room for another.
	StatusContinuationAvailable = "continuation_available"
	Text                        = "text"
)

// Reply is one tool call's result object.
type Reply struct {
	Status string
	// Content and ContentType are a simple tool's answer (the envelope
	// simple tools share); a workflow step leaves them empty and says what
	// it did in Fields.
	Content     string
	ContentType string
	// Error repeats a workflow failure's message (see WorkflowFailure).
	Error string
	// StepNumber is the step a workflow failure is about.
	StepNumber *int
	// ContinuationID names the thread a workflow step was stored in, and
	// ContinuationOffer invites a simple tool's caller to go on: the edge
	// sets them once the exchange is stored.
	ContinuationID    string
	ContinuationOffer *Offer
	Metadata          Metadata
	// Fields are the tool's own keys: a workflow step's status block, its
	// required actions, a model listing.
	Fields map[string]any
}

// Offer tells the caller how to continue the conversation.
type Offer struct {
	ContinuationID string `json:"continuation_id"`
	Note           string `json:"note"`
	RemainingTurns int    `json:"remaining_turns"`
}

// TurnsLeft words how many more turns a thread can hold, in the unit
// remaining_turns counts: the agent's offer (the edge) and the model's
// prompt (the executor) both say it so. The reference counted one more
// and called them exchanges.
func TurnsLeft(n int) string {
	return fmt.Sprintf("%d more turns (each follow-up is two: the agent's message and the model's reply)", n)
}

// Metadata says who answered and what transport did to the answer.
type Metadata struct {
	ToolName string
	// TraceID names the call's trace, for reports.
	TraceID string
	// ContinuationError says why the answer could not be saved.
	ContinuationError string
	// GeneratedCodeFile is where the edge wrote the model's code.
	GeneratedCodeFile string
	// OutputTruncated and FullContentChars say the edge cut Content to the
	// client's output limit, and from what length.
	OutputTruncated  bool
	FullContentChars int
	// FilesOmitted are the files of named directories the edge left out.
	FilesOmitted *Omitted
	// FilesSkipped are the files the call named that the edge left out,
	// each with the reason.
	FilesSkipped []SkippedFile
	// ModelUsed is the canonical name of the model that answered (clink:
	// the CLI's name), so a first call and its continuations agree, and
	// ProviderUsed its provider. RequestedModel is the name the caller gave
	// (an alias, or auto) when it differs; SetModel keeps that rule.
	ModelUsed, ProviderUsed, RequestedModel string
	// Fields are the tool's own: token usage, a workflow's counters, ...
	Fields map[string]any
}

// SetModel records the model that answered, and the name the caller asked
// for beside it when that differs from the name that answered (not by case
// alone).
func (m *Metadata) SetModel(used, provider, requested string) {
	m.ModelUsed, m.ProviderUsed, m.RequestedModel = used, provider, ""
	if requested != "" && !strings.EqualFold(requested, used) {
		m.RequestedModel = requested
	}
}

// Omitted says which files of the directories a call named were left out.
type Omitted struct {
	Count int    `json:"count"`
	Bytes int64  `json:"bytes"`
	Note  string `json:"note"`
}

// SkippedFile is a file the call named that the edge left out, and why.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Error is a tool error the agent can act on, in the envelope simple
// tools answer with: status "error" and the message as content.
func Error(tool, msg string) *Reply {
	return &Reply{Status: StatusError, Content: msg, ContentType: Text, Metadata: Metadata{ToolName: tool}}
}

// WorkflowFailure is a workflow tool's error: status "<tool>_failed", the
// message under "content" as every error has it (and under "error", where
// the reference's workflows put it), and the step it was on.
func WorkflowFailure(tool string, step int, msg string) *Reply {
	return &Reply{Status: tool + "_failed", Content: msg, ContentType: Text, Error: msg, StepNumber: &step,
		Metadata: Metadata{ToolName: tool}}
}

// ForWorkflow words an Error as its tool's workflow failure at step,
// keeping its metadata; any other reply is returned as it is.
func (r *Reply) ForWorkflow(step int) *Reply {
	if r == nil || r.Status != StatusError {
		return r
	}
	f := WorkflowFailure(r.Metadata.ToolName, step, r.Content)
	f.Metadata = r.Metadata
	return f
}

// With sets metadata fields of the tool's own and returns r.
func (r *Reply) With(fields map[string]any) *Reply {
	if r.Metadata.Fields == nil {
		r.Metadata.Fields = map[string]any{}
	}
	for k, v := range fields {
		r.Metadata.Fields[k] = v
	}
	return r
}

// Encode is the reply as the client reads it. Every reply is built from
// strings, numbers, bools, lists and maps of them, which always encode; a
// failure is a bug in the tool that built it.
func (r *Reply) Encode() []byte {
	raw, err := r.MarshalJSON() // what json.Marshal would write, without its second pass over it
	if err != nil {
		panic(fmt.Sprintf("reply: %s reply does not encode: %v", r.Metadata.ToolName, err))
	}
	return raw
}

// Decode reads a reply that Encode wrote.
func Decode(raw []byte) (*Reply, error) {
	r := &Reply{}
	// UnmarshalJSON checks the syntax itself: json.Unmarshal would check
	// it once more first.
	if err := r.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("decode reply: %w", err)
	}
	return r, nil
}

// Scrub replaces s's secrets in every text the reply holds, in place.
func (r *Reply) Scrub(s *secrets.Scrubber) {
	if r == nil || s.Empty() {
		return
	}
	for _, p := range []*string{&r.Status, &r.Content, &r.Error, &r.Metadata.ContinuationError,
		&r.Metadata.GeneratedCodeFile, &r.Metadata.ModelUsed, &r.Metadata.ProviderUsed, &r.Metadata.RequestedModel} {
		*p = s.String(*p)
	}
	if o := r.ContinuationOffer; o != nil {
		o.Note = s.String(o.Note)
	}
	if o := r.Metadata.FilesOmitted; o != nil {
		o.Note = s.String(o.Note)
	}
	for i := range r.Metadata.FilesSkipped {
		f := &r.Metadata.FilesSkipped[i]
		f.Path, f.Reason = s.String(f.Path), s.String(f.Reason)
	}
	s.Value(r.Fields)
	s.Value(r.Metadata.Fields)
}

// ScrubJSON is Scrub for an encoded reply: a role that passes replies on
// encoded scrubs them without knowing their shape.
func ScrubJSON(raw []byte, s *secrets.Scrubber) ([]byte, error) {
	if s.Empty() || len(raw) == 0 {
		return raw, nil
	}
	r, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	r.Scrub(s)
	return r.Encode(), nil
}
