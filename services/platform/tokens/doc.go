// Package tokens estimates how many tokens a text costs a model. The estimate
// is deliberately on the high side so budgets are not overrun; a real
// tokenizer replaces it for OpenAI-family models in the memory service.
package tokens
