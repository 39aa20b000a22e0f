package gateway

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/turnmeta"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	browsePageSize    = 20
	maxBrowsePageSize = 100
	// scanPages bounds the memory pages (of 100 threads) one request looks
	// through, for a search or for a thread's branches: a search that
	// stops early says where to go on (next_page_token); a thread view
	// says its branches may be incomplete.
	scanPages = 20
	// promptPreview is how much of a first prompt a list row carries.
	promptPreview = 240
)

// threadRow is a thread as the thread browser lists it: its summary, and
// what its turns add up to.
type threadRow struct {
	ThreadID       string    `json:"thread_id"`
	ParentThreadID string    `json:"parent_thread_id"`
	ToolName       string    `json:"tool_name"`
	FirstPrompt    string    `json:"first_prompt"`
	CreatedAt      time.Time `json:"created_at"`
	LastUpdatedAt  time.Time `json:"last_updated_at"`
	ExpiresAt      time.Time `json:"expires_at"`
	TurnCount      int32     `json:"turn_count"`
	// Models answered the thread's turns, in the order they first did.
	Models []string `json:"models"`
	tokenUse
}

// tokenUse is what model calls used: tokens in (the whole prompt each
// time) and out, and the cost in US dollars of those whose model has a
// price (0 when none has).
type tokenUse struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

func (u *tokenUse) add(v tokenUse) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.CostUSD += v.CostUSD
}

// usageOf reads what the model call that wrote a turn used. turnmeta
// reads numbers no call can have (from an import: infinite, negative,
// beyond int64) as 0 or its largest, so that sums stay finite and the
// answer encodes.
func usageOf(t *memoryv1.Turn) tokenUse {
	u := turnmeta.ReadUsage(t.GetModelMetadata())
	return tokenUse{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CostUSD: u.CostUSD}
}

// rowOf is the row of a thread whose summary and turns are in hand.
func rowOf(s *memoryv1.ThreadSummary, t *memoryv1.Thread) threadRow {
	r := threadRow{
		ThreadID: s.GetThreadId(), ParentThreadID: s.GetParentThreadId(), ToolName: s.GetToolName(),
		FirstPrompt: preview(s.GetFirstPrompt()), CreatedAt: s.GetCreatedAt().AsTime(),
		LastUpdatedAt: s.GetLastUpdatedAt().AsTime(), ExpiresAt: s.GetExpiresAt().AsTime(),
		TurnCount: int32(len(t.GetTurns())), Models: []string{},
	}
	for _, turn := range t.GetTurns() {
		if m := turn.GetModelName(); m != "" && !slices.Contains(r.Models, m) {
			r.Models = append(r.Models, m)
		}
		r.add(usageOf(turn))
	}
	return r
}

// summaryOf is a thread's summary as memory's listing gives it, for a
// thread read whole: its first prompt is the first user turn among the
// first two.
func summaryOf(t *memoryv1.Thread) *memoryv1.ThreadSummary {
	s := &memoryv1.ThreadSummary{ThreadId: t.GetThreadId(), ParentThreadId: t.GetParentThreadId(),
		ToolName: t.GetToolName(), CreatedAt: t.GetCreatedAt(), LastUpdatedAt: t.GetLastUpdatedAt(),
		ExpiresAt: t.GetExpiresAt(), TurnCount: int32(len(t.GetTurns()))}
	for _, turn := range t.GetTurns()[:min(2, len(t.GetTurns()))] {
		if turn.GetRole() == memoryv1.Role_ROLE_USER {
			s.FirstPrompt = turn.GetContent()
			break
		}
	}
	return s
}

func preview(s string) string {
	if r := []rune(s); len(r) > promptPreview {
		return string(r[:promptPreview]) + "…"
	}
	return s
}

// browseQuery is what GET /v1/threads:browse was asked.
type browseQuery struct {
	size  int
	from  string // memory's page token: the cursor after the last row of the page before
	tool  string
	query string // lower case; "" matches every thread
}

func parseBrowse(r *http.Request) (browseQuery, error) {
	v := r.URL.Query()
	q := browseQuery{size: browsePageSize, from: v.Get("page_token"), tool: v.Get("tool_name"),
		query: strings.ToLower(strings.TrimSpace(v.Get("query")))}
	if s := v.Get("page_size"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > maxBrowsePageSize {
			return q, status.Errorf(codes.InvalidArgument, "page_size %q is not a number from 0 to %d (0 means %d)",
				s, maxBrowsePageSize, browsePageSize)
		}
		if n > 0 {
			q.size = n
		}
	}
	return q, nil
}

// browsePage is the answer of GET /v1/threads:browse.
type browsePage struct {
	Threads []threadRow `json:"threads"`
	// NextPageToken is empty on the last page. A search that looked
	// through many threads may stop with fewer rows than asked and a token
	// to go on.
	NextPageToken string `json:"next_page_token"`
}

// browse lists the client's threads for the thread browser
// (GET /v1/threads:browse?page_size=&page_token=&tool_name=&query=):
// most recently updated first, those started by tool_name, those whose
// first prompt holds query (any case), each with its models, tokens and
// cost.
func (p threadPaths) browse(w http.ResponseWriter, r *http.Request) {
	q, err := parseBrowse(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	page, err := p.browsePage(r.Context(), q)
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// browsePage reads memory's listing from q.from for the threads that
// match. Memory's page token is a cursor: the update time and id of the
// last thread of a page. A browse page's token is memory's cursor after
// its own last row, so that threads updated, added or deleted between
// pages shift no row of the pages still to come (an updated thread moves
// to the top, where the first page shows it).
func (p threadPaths) browsePage(ctx context.Context, q browseQuery) (browsePage, error) {
	page := browsePage{Threads: []threadRow{}}
	var found []*memoryv1.ThreadSummary
	token := q.from
	for range scanPages {
		size := maxBrowsePageSize
		if q.query == "" {
			size = q.size - len(found) // every thread listed matches: a page that ends at the last row
		}
		req := &memoryv1.ListThreadsRequest{PageSize: int32(size), PageToken: token, ToolName: q.tool}
		resp, err := p.memory.ListThreads(ctx, req)
		if err != nil {
			return page, err
		}
		for i, s := range resp.GetThreads() {
			if !strings.Contains(strings.ToLower(s.GetFirstPrompt()), q.query) {
				continue
			}
			if found = append(found, s); len(found) == q.size {
				page.NextPageToken, err = p.cursorAfter(ctx, req, resp, i)
				if err != nil {
					return page, err
				}
				return p.withTurns(ctx, page, found)
			}
		}
		if token = resp.GetNextPageToken(); token == "" {
			return p.withTurns(ctx, page, found)
		}
	}
	page.NextPageToken = token
	return p.withTurns(ctx, page, found)
}

// cursorAfter is memory's page token for the threads after the i-th that
// req listed (resp): resp's own when that thread ends the page, else the
// token of the same page asked to end there.
func (p threadPaths) cursorAfter(ctx context.Context, req *memoryv1.ListThreadsRequest,
	resp *memoryv1.ListThreadsResponse, i int) (string, error) {
	if i == len(resp.GetThreads())-1 {
		return resp.GetNextPageToken(), nil
	}
	again, err := p.memory.ListThreads(ctx, &memoryv1.ListThreadsRequest{PageSize: int32(i + 1),
		PageToken: req.GetPageToken(), ToolName: req.GetToolName()})
	return again.GetNextPageToken(), err
}

// withTurns reads each listed thread to add up its turns; one deleted in
// the meantime is left out.
func (p threadPaths) withTurns(ctx context.Context, page browsePage,
	found []*memoryv1.ThreadSummary) (browsePage, error) {
	for _, s := range found {
		resp, release, err := p.wholeThread(ctx, s.GetThreadId(), 1)
		if status.Code(err) == codes.NotFound {
			continue
		}
		if err != nil {
			return page, err
		}
		page.Threads = append(page.Threads, rowOf(s, resp.GetThread()))
		release()
	}
	return page, nil
}
