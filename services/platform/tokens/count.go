package tokens

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Encodings a count can be made with. EstimateEncoding is the calibrated
// estimate used for models whose tokenizer zen does not ship.
const (
	O200k            = "o200k_base"
	Cl100k           = "cl100k_base"
	EstimateEncoding = "estimate"
)

// EncodingFor names how to count tokens for a model: OpenAI's BPE
// encodings for its families (also behind an "openai/" vendor prefix),
// the estimate for everything else.
func EncodingFor(model string) string {
	m := strings.ToLower(model)
	m = strings.TrimPrefix(m, "openai/")
	for _, p := range []string{"gpt-5", "gpt-4.1", "gpt-4o", "chatgpt-4o", "o1", "o3", "o4", "gpt-oss"} {
		if strings.HasPrefix(m, p) {
			return O200k
		}
	}
	for _, p := range []string{"gpt-4", "gpt-3.5", "gpt-35"} {
		if strings.HasPrefix(m, p) {
			return Cl100k
		}
	}
	return EstimateEncoding
}

var (
	codecsOnce sync.Once
	codecs     map[string]*encoder
)

// encoder counts with one of the module's codecs: the text cut into its
// pieces here (split.go), each piece counted by the codec once and then
// remembered.
type encoder struct {
	codec  tokenizer.Codec
	split  splitter
	pieces pieceCache
}

// Count returns the tokens of text in the named encoding. The BPE
// encodings ship inside the tokenizer module: nothing is downloaded.
func Count(encoding, text string) int64 {
	if encoding == EstimateEncoding || text == "" {
		return Estimate(text)
	}
	codecsOnce.Do(func() {
		codecs = map[string]*encoder{}
		for e, split := range map[tokenizer.Encoding]splitter{tokenizer.O200kBase: splitO200k,
			tokenizer.Cl100kBase: splitCl100k} {
			if c, err := tokenizer.Get(e); err == nil {
				codecs[string(e)] = &encoder{codec: c, split: split}
			}
		}
	})
	e, ok := codecs[encoding]
	if !ok {
		return Estimate(text)
	}
	if !utf8.ValidString(text) {
		// The module reads invalid bytes as U+FFFD; pieces does not.
		return e.whole(text)
	}
	var n int64
	e.split.pieces(text, func(piece string) { n += e.piece(piece) })
	return n
}

// whole is the codec's count of text.
func (e *encoder) whole(text string) int64 {
	n, err := e.codec.Count(text)
	if err != nil {
		return Estimate(text)
	}
	return int64(n)
}

// piece is the tokens of one piece: the codec counts each piece on its
// own, as in its text (a piece's BPE reads nothing around it).
func (e *encoder) piece(piece string) int64 {
	if n, ok := e.pieces.get(piece); ok {
		return n
	}
	n := e.whole(piece)
	e.pieces.put(piece, n)
	return n
}

// pieceCache remembers the counts of short pieces: a fixed table, each
// piece in the slot its hash names, a new piece replacing the old. Most
// pieces are words a text repeats and other texts share; what any text
// can make it hold is bounded, 2^16 pieces of at most 32 bytes.
type pieceCache struct {
	slots [1 << 16]atomic.Pointer[countedPiece]
}

type countedPiece struct {
	piece  string
	tokens int64
}

// maxCachedPiece bounds the pieces kept: longer ones are rare and seldom
// repeat.
const maxCachedPiece = 32

var pieceSeed = maphash.MakeSeed()

func (c *pieceCache) slot(piece string) *atomic.Pointer[countedPiece] {
	return &c.slots[maphash.String(pieceSeed, piece)&(uint64(len(c.slots))-1)]
}

func (c *pieceCache) get(piece string) (int64, bool) {
	if len(piece) > maxCachedPiece {
		return 0, false
	}
	if p := c.slot(piece).Load(); p != nil && p.piece == piece {
		return p.tokens, true
	}
	return 0, false
}

func (c *pieceCache) put(piece string, tokens int64) {
	if len(piece) <= maxCachedPiece {
		// A copy: the piece is a slice of a text the cache must not keep.
		c.slot(piece).Store(&countedPiece{piece: strings.Clone(piece), tokens: tokens})
	}
}
