package memory

import (
	"context"
	"slices"

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

func (s *Service) selectFiles(ctx context.Context, sel *Selection, charge *counter, turns []Turn,
	newFiles []FileRef) error {
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
	if len(candidates) == 0 {
		return nil
	}
	shas := make([]string, len(candidates))
	for i, c := range candidates {
		shas[i] = c.SHA256
	}
	blobs, err := s.store.GetBlobs(ctx, shas, s.now())
	if err != nil {
		return err
	}
	for _, c := range candidates {
		b, ok := blobs[c.SHA256]
		if !ok {
			sel.OmittedFiles++ // expired or never stored
			continue
		}
		c.Content, c.Tokens = b.Content, charge.tokens(b.Tokens, b.Content)
		if sel.FileTokens+c.Tokens > sel.FileBudget {
			sel.OmittedFiles++
			continue
		}
		sel.FileTokens += c.Tokens
		sel.Files = append(sel.Files, c)
	}
	slices.SortStableFunc(sel.Files, func(a, b HistoryFile) int { return a.turn - b.turn })
	for _, nf := range newFiles {
		if slices.ContainsFunc(sel.Files, func(f HistoryFile) bool { return f.Path == nf.Path && f.SHA256 == nf.SHA256 }) {
			sel.Known = append(sel.Known, nf.Path)
		}
	}
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
	if c.encoding == tokens.EstimateEncoding {
		return tokens.Estimate(text)
	}
	if n, ok := counts[c.encoding]; ok {
		return n
	}
	if len(text) > c.left {
		return int64(len(text))
	}
	c.left -= len(text)
	return tokens.Count(c.encoding, text)
}
