package tokens

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

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
