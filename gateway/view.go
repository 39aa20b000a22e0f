package gateway

import (
	"context"
	"net/http"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/tokens"
	"github.com/zenmcp/zen/services/platform/turnmeta"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// threadView is a thread as the thread browser shows it
// (GET /v1/threads/{thread_id}/view).
type threadView struct {
	Thread threadRow `json:"thread"`
	// LastModel is the model a continuation that names none would use.
	LastModel string     `json:"last_model"`
	Turns     []turnView `json:"turns"`
	Files     []fileView `json:"files"`
	Steps     []stepView `json:"steps"`
	// Parent is the thread this one was branched or continued from; its
	// Missing is set when it is gone (expired, deleted, or another
	// client's).
	Parent   *threadLink  `json:"parent,omitempty"`
	Branches []threadLink `json:"branches"`
	// BranchesComplete is false when the client has more threads than one
	// look goes through, so that some branches may be missing.
	BranchesComplete bool `json:"branches_complete"`
}

// turnView is one turn, with what its model call used and where its trace is.
type turnView struct {
	Index         int32      `json:"index"` // from 1
	Role          string     `json:"role"`  // user or assistant
	ToolName      string     `json:"tool_name"`
	ModelName     string     `json:"model_name"`
	ModelProvider string     `json:"model_provider"`
	Timestamp     time.Time  `json:"timestamp,omitzero"` // none on turns stored before turns were dated
	Content       string     `json:"content"`
	Files         []turnFile `json:"files"`
	Images        int32      `json:"images"`
	// TextTokens estimates the turn's own text.
	TextTokens int64 `json:"text_tokens"`
	tokenUse
	TraceID string `json:"trace_id"`
	// TraceURL links the trace when ZEN_TRACE_URL is set.
	TraceURL string `json:"trace_url"`
}

// turnFile is a file as one turn referenced it.
type turnFile struct {
	Path      string `json:"path"`
	SHA256    string `json:"sha256"`
	SizeBytes int32  `json:"size_bytes"`
	// Changed is set when an earlier turn referenced the same path with
	// other contents.
	Changed bool `json:"changed"`
}

// fileView is a file across the thread.
type fileView struct {
	Path      string  `json:"path"`
	SHA256    string  `json:"sha256"` // as last referenced
	SizeBytes int32   `json:"size_bytes"`
	Turns     []int32 `json:"turns"`      // that referenced it
	ChangedAt []int32 `json:"changed_at"` // turns that brought other contents than the reference before
}

// stepView is a workflow step, as the executor records it on the step's
// user turn, and that turn.
type stepView struct {
	Turn int32 `json:"turn"`
	turnmeta.Step
}

// threadLink names a related thread.
type threadLink struct {
	ThreadID    string    `json:"thread_id"`
	ToolName    string    `json:"tool_name,omitempty"`
	FirstPrompt string    `json:"first_prompt,omitempty"`
	CreatedAt   time.Time `json:"created_at,omitzero"`
	TurnCount   int32     `json:"turn_count"`
	Missing     bool      `json:"missing,omitempty"`
}

func linkOf(s *memoryv1.ThreadSummary) threadLink {
	return threadLink{ThreadID: s.GetThreadId(), ToolName: s.GetToolName(), FirstPrompt: preview(s.GetFirstPrompt()),
		CreatedAt: s.GetCreatedAt().AsTime(), TurnCount: s.GetTurnCount()}
}

// view shows a thread for the thread browser: its turns with what each
// used, its files and whether they changed, its workflow steps, its parent
// and branches, and trace links (GET /v1/threads/{thread_id}/view).
func (p threadPaths) view(w http.ResponseWriter, r *http.Request) {
	// The parent and the branches first, so that the view neither waits
	// for room while it holds some nor holds it while it looks.
	id := r.PathValue("thread_id")
	basic, err := p.memory.GetThread(r.Context(), &memoryv1.GetThreadRequest{ThreadId: id,
		View: memoryv1.ThreadView_THREAD_VIEW_BASIC})
	if err != nil {
		writeStatus(w, err)
		return
	}
	v := threadView{}
	if pid := basic.GetThread().GetParentThreadId(); pid != "" {
		if v.Parent, err = p.parent(r.Context(), pid); err != nil {
			writeStatus(w, err)
			return
		}
	}
	if v.Branches, v.BranchesComplete, err = p.branches(r.Context(), id); err != nil {
		writeStatus(w, err)
		return
	}
	got, release, err := p.wholeThread(r.Context(), id, viewCost)
	if err != nil {
		writeStatus(w, err)
		return
	}
	defer release()
	t := got.GetThread()
	v.Thread, v.LastModel = rowOf(summaryOf(t), t), got.GetLastModel()
	v.Turns, v.Files = p.turns(t.GetTurns())
	v.Steps = steps(t.GetTurns())
	writeJSON(w, http.StatusOK, v)
}

// viewCost is how many times a thread's weight a view of it holds: the
// thread, its turns as the view shows them, and the view's JSON.
const viewCost = 3

// threadSummary is what changes when a thread does
// (GET /v1/threads/{thread_id}/summary).
type threadSummary struct {
	ThreadID      string    `json:"thread_id"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
	TurnCount     int32     `json:"turn_count"`
}

// summary answers what changes when a thread does: the thread browser
// asks it every 2 s while a thread is open, and reads the whole view again
// only when it changed (the view looks through the client's threads for
// branches and answers every turn's text). It asks memory for the
// thread's basic view, without the turns: it read the whole thread.
func (p threadPaths) summary(w http.ResponseWriter, r *http.Request) {
	got, err := p.memory.GetThread(r.Context(), &memoryv1.GetThreadRequest{ThreadId: r.PathValue("thread_id"),
		View: memoryv1.ThreadView_THREAD_VIEW_BASIC})
	if err != nil {
		writeStatus(w, err)
		return
	}
	t := got.GetThread()
	writeJSON(w, http.StatusOK, threadSummary{ThreadID: t.GetThreadId(), LastUpdatedAt: t.GetLastUpdatedAt().AsTime(),
		TurnCount: got.GetTurnCount()})
}

// turns are the thread's turns as the page shows them, and its files,
// each path once, in the order first referenced.
func (p threadPaths) turns(turns []*memoryv1.Turn) ([]turnView, []fileView) {
	out := make([]turnView, 0, len(turns))
	files := []fileView{}
	at := map[string]int{} // path -> index in files
	for i, t := range turns {
		n := int32(i + 1)
		traceID := turnmeta.ReadTraceID(t.GetModelMetadata())
		tv := turnView{
			Index: n, Role: roleName(t.GetRole()), ToolName: t.GetToolName(), ModelName: t.GetModelName(),
			ModelProvider: t.GetModelProvider(), Content: t.GetContent(), Images: int32(len(t.GetImages())),
			TextTokens: tokens.Estimate(t.GetContent()), tokenUse: usageOf(t), TraceID: traceID,
			TraceURL: p.trace.For(traceID), Files: []turnFile{},
		}
		if ts := t.GetTimestamp(); ts != nil {
			tv.Timestamp = ts.AsTime()
		}
		for _, f := range t.GetFiles() {
			tf := turnFile{Path: f.GetPath(), SHA256: f.GetSha256(), SizeBytes: f.GetSizeBytes()}
			j, seen := at[f.GetPath()]
			if !seen {
				j = len(files)
				at[f.GetPath()] = j
				files = append(files, fileView{Path: f.GetPath(), Turns: []int32{}, ChangedAt: []int32{}})
			}
			fv := &files[j]
			tf.Changed = seen && fv.SHA256 != f.GetSha256()
			if tf.Changed {
				fv.ChangedAt = append(fv.ChangedAt, n)
			}
			fv.SHA256, fv.SizeBytes = f.GetSha256(), f.GetSizeBytes()
			fv.Turns = append(fv.Turns, n)
			tv.Files = append(tv.Files, tf)
		}
		out = append(out, tv)
	}
	return out, files
}

func roleName(r memoryv1.Role) string {
	switch r {
	case memoryv1.Role_ROLE_USER:
		return "user"
	case memoryv1.Role_ROLE_ASSISTANT:
		return "assistant"
	}
	return "unknown"
}

// steps are the workflow steps the executor recorded on the thread's turns.
func steps(turns []*memoryv1.Turn) []stepView {
	out := []stepView{}
	for i, t := range turns {
		if s, ok := turnmeta.ReadStep(t.GetModelMetadata()); ok {
			out = append(out, stepView{Turn: int32(i + 1), Step: s})
		}
	}
	return out
}

// parent links the thread a thread was branched or continued from, read
// directly: missing when it is gone (expired, deleted, or another
// client's: memory answers NotFound for both).
func (p threadPaths) parent(ctx context.Context, id string) (*threadLink, error) {
	got, release, err := p.wholeThread(ctx, id, 1)
	if status.Code(err) == codes.NotFound {
		return &threadLink{ThreadID: id, Missing: true}, nil
	}
	if err != nil {
		return nil, err
	}
	defer release()
	return new(linkOf(summaryOf(got.GetThread()))), nil
}

// branches looks through the client's threads for those whose parent is
// id; complete is false when it stopped before the end. Memory's listing
// has no parent filter (adding one changes its proto), so this reads up
// to scanPages pages of summaries.
func (p threadPaths) branches(ctx context.Context, id string) (found []threadLink, complete bool, err error) {
	found = []threadLink{}
	token := ""
	for range scanPages {
		resp, err := p.memory.ListThreads(ctx,
			&memoryv1.ListThreadsRequest{PageSize: maxBrowsePageSize, PageToken: token})
		if err != nil {
			return nil, false, err
		}
		for _, s := range resp.GetThreads() {
			if s.GetParentThreadId() == id {
				found = append(found, linkOf(s))
			}
		}
		if token = resp.GetNextPageToken(); token == "" {
			return found, true, nil
		}
	}
	return found, false, nil
}
