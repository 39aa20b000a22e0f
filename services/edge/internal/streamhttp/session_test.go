package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
)

// withTokens puts Calls behind the SDK's bearer check, as the edge does:
// "alice" and "bob" are two clients; "shared" is one token two people use.
func withTokens(h http.Handler) http.Handler {
	verify := func(_ context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		if token != "alice" && token != "bob" && token != "shared" {
			return nil, mcpauth.ErrInvalidToken
		}
		return &mcpauth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	return mcpauth.RequireBearerToken(verify, nil)(h)
}

func TestInitializeMintsAnUnguessableSession(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(NewCalls().Wrap(newRecorder()))
	defer srv.Close()
	seen := map[string]bool{}
	for range 3 {
		res, err := http.Post(srv.URL, "application/json",
			strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		id := res.Header.Get(SessionHeader)
		if len(id) < 26 || seen[id] || sessionOf(&http.Request{Header: res.Header}) != id {
			t.Errorf("session id %q: want 26 fresh base32 characters (130 random bits)", id)
		}
		seen[id] = true
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	res, err := http.Post(srv.URL, "application/json", strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if id := res.Header.Get(SessionHeader); id != "" {
		t.Errorf("tools/list was handed session %q; only initialize starts one", id)
	}
}

func TestSessionShape(t *testing.T) {
	t.Parallel()
	minted := newSessionID()
	for _, c := range []struct {
		name, header, want string
	}{
		{"minted", minted, minted},
		{"none", "", ""},
		{"short guess", "1", ""},
		{"lower case", "abcdefghijklmnopqrstuvwxyz", ""},
		{"too long", minted + "A", ""},
		{"not base32", "ABCDEFGHIJKLMNOPQRSTUVWX01", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &http.Request{Header: http.Header{SessionHeader: {c.header}}}
			if got := sessionOf(r); got != c.want {
				t.Errorf("sessionOf(%q) = %q, want %q", c.header, got, c.want)
			}
		})
	}
}

// TestCancellationStaysInItsSession: a victim's call with JSON-RPC id 1 is
// in flight; each attacker sends notifications/cancelled for id 1. Only the
// victim's own session may end it.
func TestCancellationStaysInItsSession(t *testing.T) {
	t.Parallel()
	victimSession, otherSession := newSessionID(), newSessionID()
	cases := []struct {
		name          string
		call, cancel  map[string]string // request headers
		wantCancelled bool
	}{
		{
			name:          "the victim cancels its own call",
			call:          map[string]string{SessionHeader: victimSession},
			cancel:        map[string]string{SessionHeader: victimSession},
			wantCancelled: true,
		},
		{
			name:   "auth off, another session, colliding id",
			call:   map[string]string{SessionHeader: victimSession},
			cancel: map[string]string{SessionHeader: otherSession},
		},
		{
			name:   "auth off, a cancel with no session",
			call:   map[string]string{SessionHeader: victimSession},
			cancel: nil,
		},
		{
			name:   "a stateless call (no session) and a cancel with none",
			call:   nil,
			cancel: nil,
		},
		{
			name:   "a guessed short session id on both sides",
			call:   map[string]string{SessionHeader: "1"},
			cancel: map[string]string{SessionHeader: "1"},
		},
		{
			name:   "one shared token, another session",
			call:   map[string]string{SessionHeader: victimSession, "Authorization": "Bearer shared"},
			cancel: map[string]string{SessionHeader: otherSession, "Authorization": "Bearer shared"},
		},
		{
			name:   "another client replays the victim's session id",
			call:   map[string]string{SessionHeader: victimSession, "Authorization": "Bearer alice"},
			cancel: map[string]string{SessionHeader: victimSession, "Authorization": "Bearer bob"},
		},
		{
			name:          "the victim cancels its own call behind a token",
			call:          map[string]string{SessionHeader: victimSession, "Authorization": "Bearer alice"},
			cancel:        map[string]string{SessionHeader: victimSession, "Authorization": "Bearer alice"},
			wantCancelled: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder()
			var h http.Handler = NewCalls().Wrap(rec)
			if c.call["Authorization"] != "" {
				h = withTokens(h)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			life, got := startCall(t, rec, srv.URL, callOne, c.call)
			if r := post(t, srv.URL, cancelOne, c.cancel); r.Status != http.StatusOK {
				t.Fatalf("the cancel POST got %+v", r)
			}
			// Calls cancels before it passes the notification on, so
			// by now any effect it had is there to see.
			if gotCancelled := errors.Is(context.Cause(life), ErrClientCancelled); gotCancelled != c.wantCancelled {
				t.Errorf("cancelled = %v, want %v", gotCancelled, c.wantCancelled)
			}
			close(rec.release)
			want := reply{Status: http.StatusOK, ContentType: "application/json", Body: "answered"}
			if c.wantCancelled {
				want.Body = "cancelled"
			}
			if diff := cmp.Diff(want, wait(t, got)); diff != "" {
				t.Errorf("the victim's reply (-want +got):\n%s", diff)
			}
		})
	}
}
