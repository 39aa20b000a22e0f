package provider

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
)

// Fault says whom a failure is about, so that a circuit breaker can follow
// it: a bad model must not rest its provider for every other model.
type Fault int

const (
	// FaultModel is the model's own failure: a name the provider does not
	// know, its 5xx, its rate limit, a reply cut off or unreadable. It is
	// the zero value: a failure nobody classified stays with the narrowest
	// scope.
	FaultModel Fault = iota
	// FaultProvider fails every model of the provider alike: a refused
	// connection, a DNS or TLS failure, a key refused (401, 403).
	FaultProvider
	// FaultTimeout is a reply that did not come in time. On one model it is
	// that model's; on every model, the provider's.
	FaultTimeout
	// FaultRequest is this request alone: a safety block, an image that
	// cannot be read, a prompt past the context window (the provider's
	// 413, 422 and most 400s), a reply that ran out of tokens. It says nothing of
	// the model's health, and must not rest the model for the other
	// clients: a client's own bad input would otherwise take a model away
	// from everyone, at no cost to it once the breaker is open.
	FaultRequest
)

// statusFault classifies an HTTP error status and the provider's message
// about a request for model.
func statusFault(code int, msg, model string) Fault {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return FaultProvider
	case http.StatusRequestTimeout, http.StatusGatewayTimeout:
		return FaultTimeout
	case http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return FaultRequest
	case http.StatusBadRequest:
		return badRequestFault(msg, model)
	}
	return FaultModel
}

// badRequestFault classifies a 400 by what its message names. Most are
// the request's own (an image, a prompt past the window), but some
// providers answer a refused key (Gemini: "API key not valid") or a model
// they do not serve (OpenRouter, LiteLLM) with a 400 too: those must still
// rest the provider or the model, or calls would never go on to another
// provider serving the same model.
//
// The words must be the provider's, not the client's. A message that
// names the model is never read as the key's: the model's name is the
// client's to choose (any vendor/model on OpenRouter, which answers "<name>
// is not a valid model ID"), and one named "x/API key not valid" would
// have rested the provider for everyone. A model's own rest is the
// client's choice of model alone. (The edge refuses a data URL that is not
// base64, so a provider quoting the image it could not decode quotes no
// words either.)
func badRequestFault(msg, model string) Fault {
	m := strings.ToLower(msg)
	switch {
	case (model == "" || !strings.Contains(m, strings.ToLower(model))) && containsAny(m, "api key not valid",
		"api key not found", "api_key_invalid", "invalid api key", "incorrect api key", "api key is invalid",
		"api key expired"):
		return FaultProvider
	case containsAny(m, "is not a valid model", "invalid model", "model not found", "model_not_found",
		"unknown model", "no such model") || strings.Contains(m, "model") && strings.Contains(m, "does not exist"):
		return FaultModel
	}
	return FaultRequest
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// transportFault classifies a failure below HTTP. Not reaching the provider
// at all (no connection, no name, no trusted certificate) holds for every
// model; a timeout once connected is a slow reply; anything else broke one
// reply.
func transportFault(err error) Fault {
	var op *net.OpError
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &op) && op.Op == "dial", errors.As(err, &dns), errors.As(err, &cert), errors.As(err, &record):
		return FaultProvider
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return FaultTimeout
	}
	return FaultModel
}
