// Package provider calls model APIs. Compat speaks the OpenAI chat
// completions wire format, which OpenAI and every self-hosted server zen
// supports (Ollama, vLLM, LM Studio) understand.
package provider
