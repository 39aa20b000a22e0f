package memory

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/zenmcp/zen/services/platform/tokens"
)

// SelectParams are what a selection is for.
type SelectParams struct {
	// ContextWindow is the model's; when set, it is split into the history
	// and file budgets the reference uses, and files are selected too.
	ContextWindow int64
	// Budget bounds the turns when ContextWindow is not set.
	Budget int64
	// Model picks the tokenizer.
	Model string
	// NewFiles are the files the new call brings.
	NewFiles []FileRef
}

// HistoryFile is a file of the history, as its newest reference has it.
type HistoryFile struct {
	FileRef
	Content string
	Tokens  int64
	turn    int // index of the turn that last referenced it
}

// Selection is the part of a thread's history that fits its budgets. Its
// Turns may share memory with Thread.Turns: both are read only.
type Selection struct {
	Thread        *Thread
	Turns         []Turn // oldest first, across the thread's chain
	Total         int    // turns along the whole chain
	Omitted       int    // older turns left out
	TokensUsed    int64  // by the selected turns
	Files         []HistoryFile
	OmittedFiles  int
	FileTokens    int64
	Known         []string // paths of NewFiles already in Files unchanged
	HistoryBudget int64
	FileBudget    int64
	Encoding      string
}

// turnHeader is what a turn's label line costs once rendered.
const turnHeader = 16

// SelectFrom chooses what a model sees of a thread and its ancestors, a
// chain ReadChain read. Files: walking the turns newest to oldest, each path counts once, at its
// newest reference (a changed file is its newer version), and files are
// kept while they fit the file budget. Turns: newest first within the
// history budget, stopping at the first that does not fit so the history
// has no gap. Both come back oldest first.
//
// The two budgets are separate slices of the content budget. The reference
// server charges the files to the history budget too, which for large
// models (equal 40% slices) lets files crowd out every turn.
func (s *Service) SelectFrom(ctx context.Context, chain []*Thread, p SelectParams) (Selection, error) {
	t := chain[len(chain)-1]
	// A thread without ancestors, the usual case, selects from its own
	// turns, which the store copied for the caller: copying them again was one
	// more allocation of every turn per call.
	turns := chain[len(chain)-1].Turns
	if len(chain) > 1 {
		turns = nil
		for _, c := range chain {
			turns = append(turns, c.Turns...)
		}
	}
	sel := Selection{Thread: t, Total: len(turns), Encoding: tokens.EncodingFor(p.Model), HistoryBudget: p.Budget}
	charge := newCounter(sel.Encoding)
	if p.ContextWindow > 0 {
		b := tokens.ForContext(p.ContextWindow)
		sel.HistoryBudget, sel.FileBudget = b.History, b.Files
	}
	// The turns first: what the counter may still count goes to them, not
	// to files that might not fit.
	start := len(turns)
	for i := len(turns) - 1; i >= 0; i-- {
		cost := charge.tokens(turns[i].Tokens, turns[i].Content) + turnHeader
		if sel.TokensUsed+cost > sel.HistoryBudget {
			break
		}
		sel.TokensUsed += cost
		start = i
	}
	sel.Turns, sel.Omitted = turns[start:], start
	if p.ContextWindow > 0 {
		if err := s.selectFiles(ctx, &sel, charge, turns, p.NewFiles); err != nil {
			return Selection{}, err
		}
	}
	return sel, nil
}

// selectFiles keeps the files the turns name that fit the file budget,
// newest reference first. It weighs them first (weighFiles), and reads the
// content of those it keeps alone: reading every candidate first, 32 files
// of 256 KiB that did not fit a 128K model's budget cost each continued
// call 8 MiB of reads.
func (s *Service) selectFiles(ctx context.Context, sel *Selection, charge *counter, turns []Turn,
	newFiles []FileRef) error {
	candidates := fileCandidates(turns)
	if len(candidates) == 0 {
		return nil
	}
	now := s.now()
	costs, read, err := s.weighFiles(ctx, candidates, charge, now)
	if err != nil {
		return err
	}
	var kept []string
	for i, c := range candidates {
		if costs[i] < 0 || sel.FileTokens+costs[i] > sel.FileBudget {
			sel.OmittedFiles++ // expired, never stored, or over the budget
			continue
		}
		c.Tokens = costs[i]
		sel.FileTokens += c.Tokens
		sel.Files = append(sel.Files, c)
		kept = append(kept, c.SHA256)
	}
	if err := s.readBlobs(ctx, read, kept, now); err != nil { // those read to weigh them are not read again
		return err
	}
	sel.Files = slices.DeleteFunc(sel.Files, func(f HistoryFile) bool {
		if _, ok := read[f.SHA256]; ok {
			return false
		}
		sel.OmittedFiles++ // expired since its head was read
		sel.FileTokens -= f.Tokens
		return true
	})
	for i := range sel.Files {
		sel.Files[i].Content = read[sel.Files[i].SHA256].Content
	}
	slices.SortStableFunc(sel.Files, func(a, b HistoryFile) int { return a.turn - b.turn })
	for _, nf := range newFiles {
		if slices.ContainsFunc(sel.Files, func(f HistoryFile) bool { return f.Path == nf.Path && f.SHA256 == nf.SHA256 }) {
			sel.Known = append(sel.Known, nf.Path)
		}
	}
	return nil
}

// weighFiles is what each candidate costs, from its blob's head (-1 for a
// blob that is not there), and the blobs it read to tell: those whose cost
// only their content tells (the counter counts them: at most countOnRead
// bytes in all), and those whose length the store does not know without
// their content (stored by an older version).
func (s *Service) weighFiles(ctx context.Context, candidates []HistoryFile, charge *counter,
	now time.Time) ([]int64, map[string]Blob, error) {
	shas := make([]string, 0, len(candidates))
	for _, c := range candidates {
		shas = append(shas, c.SHA256)
	}
	heads, err := s.store.BlobHeads(ctx, distinct(shas), now)
	if err != nil {
		return nil, nil, err
	}
	read := map[string]Blob{}
	unknown := unsized(heads)
	if err := s.readBlobs(ctx, read, unknown, now); err != nil {
		return nil, nil, err
	}
	for _, sha := range unknown {
		if b, ok := read[sha]; ok {
			heads[sha] = BlobHead{Bytes: int64(len(b.Content)), Tokens: b.Tokens}
		} else {
			delete(heads, sha) // expired meanwhile
		}
	}
	costs := make([]int64, len(candidates))
	var counted []int // the candidates the counter counts
	var texts []string
	for i, c := range candidates {
		costs[i] = -1
		if h, ok := heads[c.SHA256]; ok {
			n, mustCount := charge.costOf(h.Tokens, h.Bytes)
			if costs[i] = n; mustCount {
				counted = append(counted, i)
				texts = append(texts, c.SHA256)
			}
		}
	}
	if err := s.readBlobs(ctx, read, texts, now); err != nil {
		return nil, nil, err
	}
	for _, i := range counted {
		costs[i] = -1 // expired since its head was read
		if b, ok := read[candidates[i].SHA256]; ok {
			costs[i] = charge.count(b.Content)
		}
	}
	return costs, read, nil
}

// fileCandidates are the files turns name, each path once, at its newest
// reference, newest first.
func fileCandidates(turns []Turn) []HistoryFile {
	var candidates []HistoryFile
	seen := map[string]bool{}
	for i := len(turns) - 1; i >= 0; i-- {
		for _, f := range turns[i].Files {
			if !seen[f.Path] && f.SHA256 != "" {
				seen[f.Path] = true
				candidates = append(candidates, HistoryFile{FileRef: f, turn: i})
			}
		}
	}
	return candidates
}

// distinct is shas, each once, in the order they first come.
func distinct(shas []string) []string {
	seen := make(map[string]bool, len(shas))
	return slices.DeleteFunc(shas, func(sha string) bool {
		dup := seen[sha]
		seen[sha] = true
		return dup
	})
}

// unsized are the blobs among heads whose length the store does not know.
func unsized(heads map[string]BlobHead) []string {
	var shas []string
	for sha, h := range heads {
		if h.Bytes < 0 {
			shas = append(shas, sha)
		}
	}
	return shas
}

// readBlobs adds the live blobs among shas to read, reading each once
// (files under several paths share one).
func (s *Service) readBlobs(ctx context.Context, read map[string]Blob, shas []string, now time.Time) error {
	shas = slices.DeleteFunc(distinct(slices.Clone(shas)), func(sha string) bool { _, ok := read[sha]; return ok })
	if len(shas) == 0 {
		return nil
	}
	blobs, err := s.store.GetBlobs(ctx, shas, now)
	if err != nil {
		return err
	}
	maps.Copy(read, blobs)
	return nil
}

// countOnRead is how much text without a stored count one selection
// counts, in all (16 ms at worst: the slowest text counts at 4 MB/s); past
// it a text is charged a token a byte, which no text takes more of.
const countOnRead = 64 << 10

// counter charges the texts of one selection in its encoding. For a BPE
// encoding that is the count stored with a text, else (turns imported, or
// counted for another encoding than countedEncodings) a count made now
// within countOnRead, and a bound past it: counting them whole in every
// selection cost a read of 30 MB of imported text 1.35 s, and one of 150
// turns of 8 KiB 136 ms, every continued call; counting them at the import
// let a client keep both cores busy with imports it hung up on; and the
// estimate charges hex, base64 or CJK text at half of what it takes, which
// would overrun the model's window. The estimate, for other models, is
// computed from the text's length: the same figure as a stored one, never
// stale, and no map to look in (a selection charges every turn, and under
// load each turn's map was a miss in the CPU's caches).
type counter struct {
	encoding string
	left     int // bytes it may still count
}

func newCounter(encoding string) *counter { return &counter{encoding: encoding, left: countOnRead} }

// tokens is what text costs, counts being those stored with it.
func (c *counter) tokens(counts map[string]int64, text string) int64 {
	if n, mustCount := c.costOf(counts, int64(len(text))); !mustCount {
		return n
	}
	return c.count(text)
}

// costOf is what a text of size bytes costs, counts being those stored
// with it, unless only counting the text tells (mustCount), which the
// counter then expects to do (count).
func (c *counter) costOf(counts map[string]int64, size int64) (n int64, mustCount bool) {
	if c.encoding == tokens.EstimateEncoding {
		return tokens.EstimateBytes(size), false
	}
	if n, ok := counts[c.encoding]; ok {
		return n, false
	}
	if size > int64(c.left) {
		return size, false
	}
	c.left -= int(size)
	return 0, true
}

// count counts a text costOf left to it.
func (c *counter) count(text string) int64 { return tokens.Count(c.encoding, text) }
