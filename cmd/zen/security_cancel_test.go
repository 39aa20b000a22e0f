package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Another client of the same zen is the attacker here (issue #11, item 5).
// Every SDK numbers its requests from 0 or 1, so the attacker knows the id
// of the victim's call; with auth off or one token shared, it also looks
// the same to zen. Each case holds a victim's chat in flight (the model
// answers only once the attack is over), attacks it, and checks that the
// victim still gets its answer and that its SDK session still works.

// Protocol eras of the official Go SDK client: 2026-07-28 is stateless (no
// session id); 2025-11-25 initializes and gets a session id from zen.
const (
	modernEra = ""
	legacyEra = "2025-11-25"
)

// versionCall is a quick call that needs no model: proof a session works.
var versionCall = &mcp.CallToolParams{Name: "version", Arguments: map[string]any{}}

func TestSecurityCancel(t *testing.T) {
	model := newGatedModel(t)
	roots := t.TempDir()
	env := mergeEnv(fakeEnv(model.Server), map[string]string{"ZEN_FILE_ROOTS": roots})
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice "+aliceToken+"\nbob "+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	open := "http://" + startZen(t, env, []string{"mcp"}, serveArgs()...).addr("mcp") + "/mcp"
	authEnv := mergeEnv(env, map[string]string{"ZEN_AUTH_TOKENS_FILE": tokens})
	authed := "http://" + startZen(t, authEnv, []string{"mcp"}, serveArgs()...).addr("mcp") + "/mcp"
	h := &cancelHarness{model: model, workdir: roots}

	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"auth off, stateless clients, the attacker cancels its own call with the victim's id", func(t *testing.T) {
			h.victimSurvives(t, open, "", modernEra, func(t *testing.T, v victimCall) {
				h.dial(t, open, "", modernEra).cancelOwnCall(t, h, v.id)
			})
		}},
		{"auth off, sessions, the attacker cancels its own call with the victim's id", func(t *testing.T) {
			h.victimSurvives(t, open, "", legacyEra, func(t *testing.T, v victimCall) {
				h.dial(t, open, "", legacyEra).cancelOwnCall(t, h, v.id)
			})
		}},
		{"one token shared by two clients with sessions, colliding ids", func(t *testing.T) {
			h.victimSurvives(t, authed, aliceToken, legacyEra, func(t *testing.T, v victimCall) {
				h.dial(t, authed, aliceToken, legacyEra).cancelOwnCall(t, h, v.id)
			})
		}},
		{"one token shared by two stateless clients, colliding ids", func(t *testing.T) {
			h.victimSurvives(t, authed, aliceToken, modernEra, func(t *testing.T, v victimCall) {
				h.dial(t, authed, aliceToken, modernEra).cancelOwnCall(t, h, v.id)
			})
		}},
		{"a cancel with no session names a stateless call's id", func(t *testing.T) {
			h.victimSurvives(t, open, "", modernEra, func(t *testing.T, v victimCall) {
				rawCancel(t, open, v.id, nil)
			})
		}},
		{"a cancel with no session names a session's call id", func(t *testing.T) {
			h.victimSurvives(t, authed, aliceToken, legacyEra, func(t *testing.T, v victimCall) {
				rawCancel(t, authed, v.id, map[string]string{"Authorization": "Bearer " + aliceToken})
			})
		}},
		{"a forged Mcp-Session-Id", func(t *testing.T) {
			h.victimSurvives(t, open, "", legacyEra, func(t *testing.T, v victimCall) {
				rawCancel(t, open, v.id, map[string]string{"Mcp-Session-Id": rand.Text()})
			})
		}},
		{"another client replays the victim's Mcp-Session-Id", func(t *testing.T) {
			h.victimSurvives(t, authed, aliceToken, legacyEra, func(t *testing.T, v victimCall) {
				rawCancel(t, authed, v.id, map[string]string{"Mcp-Session-Id": v.session, "Authorization": "Bearer " + bobToken})
			})
		}},
		{"a cancel from another session names an id in flight on both", func(t *testing.T) {
			h.victimSurvives(t, open, "", legacyEra, func(t *testing.T, v victimCall) {
				h.dial(t, open, "", legacyEra).cancelFromOwnSession(t, h, open, v.id)
			})
		}},
		{"a storm of cancels for every id leaves the victim's session working", func(t *testing.T) {
			h.victimSurvives(t, open, "", legacyEra, func(t *testing.T, v victimCall) {
				for id := range 40 {
					rawCancel(t, open, fmt.Sprint(id), nil)
					rawCancel(t, open, fmt.Sprint(id), map[string]string{"Mcp-Session-Id": rand.Text()})
				}
			})
		}},
		{"the cancelled call's own reply is a JSON-RPC error on its stream", func(t *testing.T) {
			h.cancelledReplyIsWellFormed(t, open)
		}},
	}
	// One case at a time: the cases share two zens, and each must be the
	// only call with its id in flight there, or the old tracker's rule
	// (an ambiguous cancellation ends nothing) would hide the attack.
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

// cancelHarness is what the cases share: the model and a directory inside
// zen's file roots.
type cancelHarness struct {
	model   *gatedModel
	workdir string
}

// victimCall is the victim's chat while it is in flight.
type victimCall struct {
	id      string // its JSON-RPC id, as the SDK chose it
	session string // the victim's Mcp-Session-Id, "" when stateless
}

// victimSurvives holds a victim's chat in flight during attack, then checks
// the victim got its answer and can go on calling.
func (h *cancelHarness) victimSurvives(t *testing.T, url, token, era string, attack func(*testing.T, victimCall)) {
	t.Helper()
	victim := h.dial(t, url, token, era)
	marker := victimMarker + rand.Text()
	release := h.model.hold(t, marker)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := victim.cs.CallTool(t.Context(), h.chat(marker))
		done <- outcome{res, err}
	}()
	h.model.waitArrived(t, marker)
	call := victimCall{id: victim.log.lastCall(), session: victim.cs.ID()}
	if (era == legacyEra) != (call.session != "") {
		t.Errorf("era %q: session id %q", era, call.session)
	}
	attack(t, call)
	release()
	got := recv(t, "the victim's answer", done)
	if got.err != nil || got.res.IsError || !strings.Contains(text(got.res), "answer for "+marker) {
		t.Fatalf("the victim's call: error %v, result %+v; want its answer", got.err, got.res)
	}
	for i := range 3 {
		if _, err := victim.cs.CallTool(t.Context(), versionCall); err != nil {
			t.Fatalf("the victim's call %d after the attack: %v", i+1, err)
		}
	}
}

func (h *cancelHarness) chat(prompt string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
		"prompt":                          prompt,
		"model":                           "llama3.2",
		"working_directory_absolute_path": h.workdir,
	}}
}

// sdkClient is an official Go SDK client and the log of what it posted.
type sdkClient struct {
	cs  *mcp.ClientSession
	log *rpcLog
}

func (h *cancelHarness) dial(t *testing.T, url, token, era string) *sdkClient {
	t.Helper()
	log := newRPCLog(token)
	client := mcp.NewClient(&mcp.Implementation{Name: "zen-e2e", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: log}}
	cs, err := client.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &sdkClient{cs: cs, log: log}
}

// cancelOwnCall starts a call that gets the id victimID too, and cancels it
// as a user would: the SDK drops the call and sends notifications/cancelled
// naming the id. The attacker's own call must still be cancelled.
func (a *sdkClient) cancelOwnCall(t *testing.T, h *cancelHarness, victimID string) {
	t.Helper()
	marker := stallMarker + rand.Text()
	releaseCancel := a.log.holdCancels()
	t.Cleanup(releaseCancel)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := a.cs.CallTool(ctx, h.chat(marker))
		done <- err
	}()
	h.model.waitArrived(t, marker)
	if id := a.log.lastCall(); id != victimID {
		t.Fatalf("the attacker's call has id %s, the victim's %s: the ids must collide", id, victimID)
	}
	cancel()
	if err := recv(t, "the attacker's call", done); !errors.Is(err, context.Canceled) {
		t.Errorf("the attacker's cancelled call returned %v", err)
	}
	h.model.waitCancelled(t, marker) // the drop alone ended the attacker's call
	releaseCancel()
	recv(t, "zen's answer to the attacker's notifications/cancelled", a.log.cancelSent)
}

// cancelFromOwnSession starts a call with the id victimID too and cancels
// it by hand from the attacker's own session: that call, and only that
// one, ends, with an error the attacker's SDK takes in its stride.
func (a *sdkClient) cancelFromOwnSession(t *testing.T, h *cancelHarness, url, victimID string) {
	t.Helper()
	marker := stallMarker + rand.Text()
	done := make(chan error, 1)
	go func() {
		_, err := a.cs.CallTool(t.Context(), h.chat(marker))
		done <- err
	}()
	h.model.waitArrived(t, marker)
	if id := a.log.lastCall(); id != victimID {
		t.Fatalf("the attacker's call has id %s, the victim's %s: the ids must collide", id, victimID)
	}
	rawCancel(t, url, victimID, map[string]string{"Mcp-Session-Id": a.cs.ID()})
	var rpcErr *jsonrpc.Error
	if err := recv(t, "the attacker's call", done); !errors.As(err, &rpcErr) || rpcErr.Code != -32800 {
		t.Errorf("the attacker's own cancelled call returned %v, want JSON-RPC error -32800", err)
	}
	h.model.waitCancelled(t, marker)
	if _, err := a.cs.CallTool(t.Context(), versionCall); err != nil {
		t.Errorf("the attacker's session broke on its own cancelled call: %v", err)
	}
}

// cancelledReplyIsWellFormed drives the wire by hand as a 2025-era client:
// initialize hands out a session, and a call cancelled from it ends with a
// JSON-RPC error for its id on its SSE stream, not an empty answer.
func (h *cancelHarness) cancelledReplyIsWellFormed(t *testing.T, url string) {
	initRes := rawRPC(t, url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	if initRes == nil {
		return
	}
	session := initRes.Header.Get("Mcp-Session-Id")
	if len(session) < 26 {
		t.Fatalf("initialize handed out session id %q, want at least 128 random bits", session)
	}
	marker := stallMarker + rand.Text()
	call, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": h.chat(marker)})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *http.Response, 1)
	go func() { got <- rawRPC(t, url, string(call), map[string]string{"Mcp-Session-Id": session}) }()
	h.model.waitArrived(t, marker)
	rawCancel(t, url, "1", map[string]string{"Mcp-Session-Id": session})
	res := recv(t, "the cancelled call's reply", got)
	if res == nil {
		return
	}
	type rpcError struct {
		Code    int
		Message string
	}
	type wire struct {
		Status      int
		ContentType string
		Last        struct {
			JSONRPC string
			ID      int
			Error   *rpcError
		}
	}
	want := wire{Status: http.StatusOK, ContentType: "text/event-stream"}
	want.Last.JSONRPC, want.Last.ID = "2.0", 1
	want.Last.Error = &rpcError{Code: -32800, Message: "the client cancelled this call"}
	w := wire{Status: res.StatusCode, ContentType: res.Header.Get("Content-Type")}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if err := json.Unmarshal([]byte(data), &w.Last); err != nil {
				t.Fatalf("event data %q: %v", data, err)
			}
		}
	}
	if diff := cmp.Diff(want, w); diff != "" {
		t.Errorf("the cancelled call's reply (-want +got):\n%s", diff)
	}
	h.model.waitCancelled(t, marker)
}

// rawRPC posts one JSON-RPC message as a 2025-era client would.
func rawRPC(t *testing.T, url, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", legacyEra)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return nil
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// rawCancel sends notifications/cancelled for id; zen accepts it (a cancel
// for a call it does not know is ignored, as the spec asks).
func rawCancel(t *testing.T, url, id string, header map[string]string) {
	t.Helper()
	res := rawRPC(t, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+
		`,"reason":"attack"}}`, header)
	if res == nil {
		return
	}
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusAccepted {
		t.Errorf("notifications/cancelled got %s, want 202 Accepted", res.Status)
	}
}
