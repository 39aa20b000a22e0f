package origin

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Reason names where a failure came from.
type Reason string

const (
	// ProviderTimeout is a model call the provider did not finish in time.
	ProviderTimeout Reason = "PROVIDER_TIMEOUT"
	// ProviderUnavailable is a provider failing in a way that may pass:
	// 5xx, rate limits, dropped connections, a provider cooling down.
	ProviderUnavailable Reason = "PROVIDER_UNAVAILABLE"
	// ProviderError is a provider refusing or garbling this call: another
	// try of the same request is likely to fail alike.
	ProviderError Reason = "PROVIDER_ERROR"
	// RouterUnavailable is the executor's call to the router that broke
	// (the router stopped, or cannot be reached).
	RouterUnavailable Reason = "ROUTER_UNAVAILABLE"
	// NoProvider is the router's answer that no model provider is
	// configured; its message says what to set, for the user.
	NoProvider Reason = "NO_PROVIDER"
	// StoreFull is memory's store with no room for a write (a Redis at its
	// maxmemory, a full disk under SQLite): trying again does not help
	// until an operator makes room.
	StoreFull Reason = "STORE_FULL"
	// ClientFull is a write past what one client's threads may weigh
	// together (ZEN_CLIENT_STORE_MB): the client makes room by deleting
	// threads, or as its old ones expire.
	ClientFull Reason = "CLIENT_FULL"
	// HeavierThanAsked is memory's refusal to send a thread that weighs
	// more than the max_weight its reader asked for: the gateway weighs one
	// written anew since it weighed it again.
	HeavierThanAsked Reason = "HEAVIER_THAN_ASKED"
)

// Metadata keys.
const (
	KeyProvider = "provider"
	KeyModel    = "model"
)

// domain marks zen's own ErrorInfo details among any others.
const domain = "zen"

// Error returns a status error with code and msg that says it came from
// reason. The reason travels as a google.rpc.ErrorInfo detail, which every
// gRPC hop passes on unchanged.
func Error(code codes.Code, msg string, reason Reason, meta map[string]string) error {
	st, err := status.New(code, msg).WithDetails(&errdetails.ErrorInfo{Reason: string(reason), Domain: domain,
		Metadata: meta})
	if err != nil {
		return status.Error(code, msg) // only a detail that cannot be marshalled fails, and this one can
	}
	return st.Err()
}

// Of returns where err came from and what it said of it, or "" when err
// carries no origin.
func Of(err error) (Reason, map[string]string) {
	st, ok := status.FromError(err)
	if !ok {
		return "", nil
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == domain {
			return Reason(info.GetReason()), info.GetMetadata()
		}
	}
	return "", nil
}
