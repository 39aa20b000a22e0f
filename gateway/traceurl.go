package gateway

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// TraceURLEnv names the variable of the trace viewer's address.
const TraceURLEnv = "ZEN_TRACE_URL"

// traceIDPlaceholder is where a trace id goes in ZEN_TRACE_URL.
const traceIDPlaceholder = "{trace_id}"

// traceIDPattern is a W3C trace id. Turns carry theirs in model_metadata,
// which an import may fill with anything: only a real id becomes a link.
var traceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// TraceURL turns a trace id into the address of that trace in a viewer
// (Jaeger, Tempo through Grafana, ...). The zero value links nothing.
type TraceURL struct {
	template string
}

// LoadTraceURL reads ZEN_TRACE_URL: an http or https URL with {trace_id}
// where the id goes; unset, the page shows trace ids without links.
func LoadTraceURL(getenv func(string) string) (TraceURL, error) {
	return ParseTraceURL(strings.TrimSpace(getenv(TraceURLEnv)))
}

// ParseTraceURL checks a trace URL template (see LoadTraceURL).
func ParseTraceURL(template string) (TraceURL, error) {
	if template == "" {
		return TraceURL{}, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("%s %q %s: set it to an http or https URL with %s where the trace id goes, "+
			"e.g. http://localhost:16686/trace/%s (Jaeger), or unset it", TraceURLEnv, template, why,
			traceIDPlaceholder, traceIDPlaceholder)
	}
	if !strings.Contains(template, traceIDPlaceholder) {
		return TraceURL{}, bad("has no " + traceIDPlaceholder)
	}
	u, err := url.Parse(strings.ReplaceAll(template, traceIDPlaceholder, strings.Repeat("0", 32)))
	switch {
	case err != nil:
		return TraceURL{}, bad("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return TraceURL{}, bad("is not http or https")
	case u.Host == "":
		return TraceURL{}, bad("names no host")
	}
	return TraceURL{template: template}, nil
}

// For is the link to a trace; "" when no viewer is set or id is not a
// trace id.
func (t TraceURL) For(id string) string {
	if t.template == "" || !traceIDPattern.MatchString(id) {
		return ""
	}
	return strings.ReplaceAll(t.template, traceIDPlaceholder, id)
}
