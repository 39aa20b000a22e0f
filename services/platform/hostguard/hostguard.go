package hostguard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/zenmcp/zen/services/platform/httperr"
	"google.golang.org/grpc/codes"
)

// Env names the variable that lists the Host values zen accepts besides
// loopback names.
const Env = "ZEN_ALLOWED_HOSTS"

// Hosts are the host names and addresses, besides loopback ones, that
// requests may name in their Host header.
type Hosts struct {
	names map[string]bool // lower case; IPv6 without brackets
	anyIP bool            // AnyAddress
}

// AnyAddress is h that also allows a Host that is an IP address: for
// listeners that scrapers and tools reach by address (metrics, profiles),
// as Prometheus reaches a pod. A rebinding page cannot send one: its
// browser sends the page's own host name, and a page served from an
// address is that address's, not an attacker's.
func (h Hosts) AnyAddress() Hosts {
	h.anyIP = true
	return h
}

// Load reads ZEN_ALLOWED_HOSTS: a comma list of host names or IP
// addresses, without scheme or port (any port is accepted).
func Load(getenv func(string) string) (Hosts, error) {
	h := Hosts{names: map[string]bool{}}
	for _, f := range strings.Split(getenv(Env), ",") {
		name := strings.ToLower(strings.TrimSpace(f))
		if name == "" {
			continue
		}
		if ip, err := netip.ParseAddr(strings.Trim(name, "[]")); err == nil {
			h.names[ip.String()] = true
			continue
		}
		if strings.ContainsAny(name, ":/") {
			return Hosts{}, fmt.Errorf("%s: %q: list host names or IP addresses without a port or scheme "+
				"(any port is accepted), e.g. zen.internal,10.0.0.5", Env, f)
		}
		if !validName(name) {
			return Hosts{}, fmt.Errorf("%s: %q is not a host name: use letters, digits, '-' and '.', "+
				"e.g. zen.internal,10.0.0.5", Env, f)
		}
		h.names[name] = true
	}
	return h, nil
}

func validName(name string) bool {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

// Names lists the configured names, sorted.
func (h Hosts) Names() []string {
	if len(h.names) == 0 {
		return nil
	}
	out := make([]string, 0, len(h.names))
	for n := range h.names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Allowed reports whether a request's Host header (with or without a port)
// names this server. Loopback names always do: a browser sends them only
// to the machine it runs on, never to an address a page chose.
func (h Hosts) Allowed(hostHeader string) bool {
	host := hostHeader
	if name, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = name
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		// A zone names an interface of the machine that reads it: no
		// browser sends one, and none is an address clients are given.
		return ip.Zone() == "" && (h.anyIP || ip.IsLoopback() || h.names[ip.Unmap().String()])
	}
	return host != "" && h.names[host]
}

// CheckListener refuses an HTTP listener beyond loopback when no host names
// are configured. Such a server would either answer any Host (and so any
// page, by DNS rebinding) or refuse every client that does not sit on the
// machine itself; failing at start names the setting instead.
func (h Hosts) CheckListener(env, addr string) error {
	if len(h.names) > 0 || Loopback(addr) {
		return nil
	}
	return fmt.Errorf("%s=%s listens beyond loopback: set %s to the host names clients use to reach it "+
		"(comma list, e.g. zen.internal,10.0.0.5), so that web pages cannot reach it by DNS rebinding", env, addr, Env)
}

// loopback reports whether addr (host:port) listens on loopback only.
// Loopback reports whether addr (host:port, or a host alone) names the
// loopback interface only: localhost or a loopback IP.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Protect wraps next: a request whose Host is not allowed is refused, except
// on the open paths (health probes, which send the pod's IP as Host and
// reveal nothing), and a cross-origin browser request that is not a GET,
// HEAD or OPTIONS is refused everywhere.
func (h Hosts) Protect(next http.Handler, open ...string) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refuse(w, "cross-origin request refused: zen does not act on requests from other sites' pages "+
			"(Origin "+r.Header.Get("Origin")+", Sec-Fetch-Site "+r.Header.Get("Sec-Fetch-Site")+")")
	}))
	guarded := cop.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(open, r.URL.Path) && !h.Allowed(r.Host) {
			refuse(w, fmt.Sprintf("Host %q is not a name this server answers to (a web page may be using "+
				"DNS rebinding); if clients reach zen by that name, add it to %s", r.Host, Env))
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

// NotFromPages refuses a request that a web page made its browser send
// (Sec-Fetch-Site other than same-origin or none), whatever its method:
// for listeners only tools read (metrics, profiles), where a page's GET
// could start a CPU profile and hold the profiler. Scrapers and go tool
// pprof send no such header.
func NotFromPages(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch site := r.Header.Get("Sec-Fetch-Site"); site {
		case "", "same-origin", "none":
			next.ServeHTTP(w, r)
		default:
			refuse(w, "a request from a web page (Sec-Fetch-Site "+site+") is refused here: this listener is "+
				"for tools, not browsers")
		}
	})
}

// refuse answers 403 in zen's one error shape (code 7: permission
// denied), which MCP clients also show as text.
func refuse(w http.ResponseWriter, msg string) { httperr.Error(w, codes.PermissionDenied, msg) }
