package tokens

import (
	"strings"
	"sync"

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
	codecs     map[string]tokenizer.Codec
)

// Count returns the tokens of text in the named encoding. The BPE
// encodings ship inside the tokenizer module: nothing is downloaded.
func Count(encoding, text string) int64 {
	if encoding == EstimateEncoding || text == "" {
		return Estimate(text)
	}
	codecsOnce.Do(func() {
		codecs = map[string]tokenizer.Codec{}
		for _, e := range []tokenizer.Encoding{tokenizer.O200kBase, tokenizer.Cl100kBase} {
			if c, err := tokenizer.Get(e); err == nil {
				codecs[string(e)] = c
			}
		}
	})
	c, ok := codecs[encoding]
	if !ok {
		return Estimate(text)
	}
	n, err := c.Count(text)
	if err != nil {
		return Estimate(text)
	}
	return int64(n)
}
