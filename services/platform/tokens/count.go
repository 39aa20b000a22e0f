package tokens

import (
	"strings"
	"sync"
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
