package hostguard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func env(v string) func(string) string {
	return func(name string) string {
		if name == Env {
			return v
		}
		return ""
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value   string
		want    []string
		wantErr string
	}{
		{"", nil, ""},
		{"zen.internal, Zen-Edge ,10.0.0.5,[fd00::2],,",
			[]string{"10.0.0.5", "fd00::2", "zen-edge", "zen.internal"}, ""},
		{"zen.internal:8080", nil, "without a port"},
		{"https://zen.internal", nil, "without a port"},
		{"zen internal", nil, "not a host name"},
		{"*.internal", nil, "not a host name"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			t.Parallel()
			h, err := Load(env(tc.value))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), Env) {
					t.Fatalf("Load(%q) = %v, want an error naming %s and saying %q", tc.value, err, Env, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, h.Names()); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	h, err := Load(env("zen.internal,10.0.0.5,fd00::2"))
	if err != nil {
		t.Fatal(err)
	}
	none, _ := Load(env(""))
	for _, tc := range []struct {
		host       string
		listed, no bool // allowed with the list, and with none
	}{
		{"localhost", true, true},
		{"localhost:8080", true, true},
		{"127.0.0.1:8081", true, true},
		{"127.1.2.3", true, true},
		{"[::1]:8080", true, true},
		{"zen.internal:8080", true, false},
		{"ZEN.INTERNAL", true, false},
		{"10.0.0.5:8081", true, false},
		{"[fd00::2]:8080", true, false},
		{"attacker.example:8080", false, false},
		{"zen.internal.attacker.example", false, false},
		{"localhost.attacker.example", false, false},
		{"localhost.", false, false},
		{"10.0.0.6", false, false},
		{"[::1%25lo]:8080", false, false},
		{"[fe80::1%eth0]", false, false},
		{"", false, false},
	} {
		if got := h.Allowed(tc.host); got != tc.listed {
			t.Errorf("Allowed(%q) with a list = %v, want %v", tc.host, got, tc.listed)
		}
		if got := none.Allowed(tc.host); got != tc.no {
			t.Errorf("Allowed(%q) with no list = %v, want %v", tc.host, got, tc.no)
		}
	}
}

// TestAnyAddress: a listener reached by address (metrics, profiles)
// allows any IP as Host, and still only the listed names.
func TestAnyAddress(t *testing.T) {
	t.Parallel()
	h, err := Load(env("zen.internal"))
	if err != nil {
		t.Fatal(err)
	}
	byAddress := h.AnyAddress()
	for host, want := range map[string]bool{"10.9.8.7:9464": true, "[fd00::9]:9464": true, "127.0.0.1": true,
		"zen.internal": true, "localhost": true, "attacker.example:9464": false, "10.9.8.7.nip.io": false, "": false,
		"[fe80::1%eth0]:9464": false} {
		if got := byAddress.Allowed(host); got != want {
			t.Errorf("AnyAddress().Allowed(%q) = %v, want %v", host, got, want)
		}
	}
	if h.Allowed("10.9.8.7") {
		t.Error("AnyAddress changed the Hosts it was called on")
	}
}

func TestCheckListener(t *testing.T) {
	t.Parallel()
	listed, _ := Load(env("zen.internal"))
	none, _ := Load(env(""))
	for _, tc := range []struct {
		addr     string
		noneOK   bool
		listedOK bool
	}{
		{"127.0.0.1:8080", true, true},
		{"localhost:8080", true, true},
		{"[::1]:0", true, true},
		{"0.0.0.0:8080", false, true},
		{":8080", false, true},
		{"[::]:8080", false, true},
		{"10.0.0.5:8080", false, true},
		{"zen.internal:8080", false, true},
	} {
		err := none.CheckListener("ZEN_MCP_ADDR", tc.addr)
		if (err == nil) != tc.noneOK {
			t.Errorf("CheckListener(%q) with no list = %v, want ok=%v", tc.addr, err, tc.noneOK)
		}
		if err != nil && (!strings.Contains(err.Error(), Env) || !strings.Contains(err.Error(), "ZEN_MCP_ADDR")) {
			t.Errorf("the refusal should name %s and ZEN_MCP_ADDR: %v", Env, err)
		}
		if err := listed.CheckListener("ZEN_MCP_ADDR", tc.addr); (err == nil) != tc.listedOK {
			t.Errorf("CheckListener(%q) with a list = %v", tc.addr, err)
		}
	}
}

func TestProtect(t *testing.T) {
	t.Parallel()
	h, _ := Load(env("zen.internal"))
	reached := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("reached")) })
	srv := h.Protect(reached, "/readyz")
	for _, tc := range []struct {
		name, method, path, host string
		header                   map[string]string
		want                     int
		wantMsg                  string
	}{
		{"loopback Host", "GET", "/v1/threads", "127.0.0.1:8081", nil, 200, "reached"},
		{"listed Host", "GET", "/v1/threads", "zen.internal:8081", nil, 200, "reached"},
		{"rebound Host", "GET", "/v1/threads", "attacker.example:8081", nil, 403, "ZEN_ALLOWED_HOSTS"},
		{"probe with a pod IP", "GET", "/readyz", "10.1.2.3:8081", nil, 200, "reached"},
		{"same-origin POST", "POST", "/v1/x", "localhost:8081",
			map[string]string{"Origin": "http://localhost:8081"}, 200, "reached"},
		{"non-browser POST", "POST", "/v1/x", "localhost:8081", nil, 200, "reached"},
		{"foreign Origin", "POST", "/v1/x", "localhost:8081",
			map[string]string{"Origin": "https://attacker.example"}, 403, "cross-origin"},
		{"cross-site fetch", "POST", "/v1/x", "localhost:8081", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403,
			"cross-origin"},
		{"foreign Origin on an open path", "POST", "/readyz", "localhost:8081",
			map[string]string{"Origin": "https://attacker.example"}, 403, "cross-origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, "http://"+tc.host+tc.path, nil)
			req.Host = tc.host
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.wantMsg) {
				t.Errorf("%s %s Host %s: %d %s, want %d with %q",
					tc.method, tc.path, tc.host, rec.Code, rec.Body, tc.want, tc.wantMsg)
			}
			if rec.Code == http.StatusForbidden {
				var body struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Code != 7 {
					t.Errorf("a refusal should be JSON with code 7 (permission denied): %s", rec.Body)
				}
			}
		})
	}
}
