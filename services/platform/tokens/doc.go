// Package tokens counts what text costs a model: OpenAI's BPE encodings
// (o200k_base, cl100k_base, shipped inside the tokenizer module) for the
// models that use them, and a calibrated estimate for the rest. It finds
// the encodings' pieces itself, far faster than the module's regular
// expressions, and remembers the counts of short pieces (split.go,
// count.go). It also splits a context window into the budgets the
// reference server uses.
package tokens
