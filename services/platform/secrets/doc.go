// Package secrets owns the answer to "which values are zen's secrets": its
// bearer tokens (ZEN_AUTH_TOKEN and the tokens file), the service token,
// every provider key (*_API_KEY), the Redis password and OTLP headers. A
// Scrubber replaces those values with [redacted] in text leaving zen (tool
// results, replies, log lines), so a model or a CLI that repeats one does
// not hand it to a client. It also names zen's own credential variables,
// which no subprocess is ever given.
package secrets
