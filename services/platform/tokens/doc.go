// Package tokens counts what text costs a model: OpenAI's BPE encodings
// (o200k_base, cl100k_base, shipped inside the tokenizer module) for the
// models that use them, and a calibrated estimate for the rest. It also
// splits a context window into the budgets the reference server uses.
package tokens
